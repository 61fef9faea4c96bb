{ SPDX-License-Identifier: MIT }
{ test_exec_owner (Linux, loaded): a program that installed fastmm-c replaces itself with exec, so
  the new program runs in the same process (the same process id) with the environment the first
  one set (FASTMMC_OWNER_PID). The new program must own its heap again (mmisInstalled), not take
  itself for a module sharing another's (mmisUsingSharedMemoryManager): the owner's value holds
  the random bytes the kernel gives each program it starts as well as the process id. }
program test_exec_owner;

{$mode delphi}

uses
  FastMMC, SysUtils, FmmTest;

function execv(APath: PAnsiChar; AArgv: PPAnsiChar): Longint; cdecl; external 'c';
function getenv(AName: PAnsiChar): PAnsiChar; cdecl; external 'c';
function getpid: Longint; cdecl; external 'c';

var
  Argv: array[0..3] of PAnsiChar;
  Path, Pid: AnsiString;
begin
  CheckEquals(Ord(mmisInstalled), Ord(FastMM_GetInstallationState), ParamStr(1) + ': this program owns its heap');
  Check(getenv('FASTMMC_OWNER_PID') <> nil, ParamStr(1) + ': the owner said so in FASTMMC_OWNER_PID');
  if ParamStr(1) = '' then
  begin
    {The same process from here on: exec returns only when it failed.}
    Path := ParamStr(0);
    Pid := IntToStr(getpid);
    Argv[0] := PAnsiChar(Path);
    Argv[1] := 'after-exec';
    Argv[2] := PAnsiChar(Pid);
    Argv[3] := nil;
    execv(PAnsiChar(Path), @Argv[0]);
    Check(False, 'exec failed');
  end
  else
    CheckEquals(StrToInt(ParamStr(2)), getpid, 'after exec: the same process');
  Halt(Finish('test_exec_owner ' + ParamStr(1)));
end.
