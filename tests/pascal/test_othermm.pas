{ SPDX-License-Identifier: MIT }
{ FastMMC refuses to install over another memory manager: the other one stays, the DLL is not
  even loaded, and the refusal is reported (the event log here; standard error too, as this is
  a console program). }
program test_othermm;

uses
  OtherMM, FastMMC, SysUtils, Classes, FmmTest;

var
  Calls: Longint;
  L: TStringList;
  Log: TStringList;
  Name: string;
begin
  Check(FastMM_GetInstallationState = mmisOtherThirdPartyMemoryManagerInstalled,
    'the state says another memory manager is installed');
  CheckEquals(0, FastMMC_DLLHandle, 'the DLL was not loaded');
  Check(not FastMMC_Installed, 'FastMMC is not installed');
  Check(not FastMM_Initialize, 'FastMM_Initialize refuses (it already ran)');
  Calls := OtherGetMemCalls;
  L := TStringList.Create;
  L.Add('x');
  L.Free;
  Check(OtherGetMemCalls > Calls, 'allocations go to the other memory manager');
  Name := UTF8Encode(UnicodeString(FastMM_GetEventLogFilename));
  Check(FileExists(Name), 'the refusal is in the event log ' + Name);
  if FileExists(Name) then
  begin
    Log := TStringList.Create;
    Log.LoadFromFile(Name);
    Check(Pos('another memory manager is already installed', Log.Text) > 0, 'the event log says why');
    Log.Free;
    DeleteFile(Name);
  end;
  Halt(Finish('test_othermm'));
end.
