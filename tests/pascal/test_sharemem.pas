{ SPDX-License-Identifier: MIT }
{ borlndmm.dll as Delphi's ShareMem uses it, from Pascal: the unit BorlndmmShareMem installs the
  drop-in through the exports ShareMem imports, with Delphi's conventions (register on Win32;
  cdecl for GetMemory, FreeMemory, ReallocMemory). Every export is called here, and
  GetAllocMemCount, GetAllocMemSize and GetHeapStatus follow what the program allocates.
  FmmTest brings in FastMMC after the drop-in is installed: FastMMC must refuse to install over
  it (and says so on standard error). }
program test_sharemem;

uses
  BorlndmmShareMem, SysUtils, Classes, FastMMC, FmmTest;

const
  N = 2000;

{In a procedure: the temporary strings of check messages must not sit in the counts.}
procedure TestCounters;
var
  C0, C1, S0, S1: Integer;
  H0, H1: TDelphiHeapStatus;
  L: TStringList;
  I: Integer;
begin
  C0 := GetAllocMemCount;
  S0 := GetAllocMemSize;
  H0 := GetHeapStatus;
  Check(C0 > 0, 'GetAllocMemCount counts the RTL''s blocks: ' + IntToStr(C0));
  Check((S0 > 0) and (NativeUInt(S0) = H0.TotalAllocated), 'GetAllocMemSize = GetHeapStatus.TotalAllocated');
  L := TStringList.Create;
  for I := 0 to N - 1 do
    L.Add(StringOfChar('x', 100 + I mod 50));
  C1 := GetAllocMemCount;
  S1 := GetAllocMemSize;
  H1 := GetHeapStatus;
  Check(C1 >= C0 + N, 'GetAllocMemCount grew by the list''s strings: ' + IntToStr(C1 - C0));
  Check(S1 >= S0 + N * 100, 'GetAllocMemSize grew by their bytes: ' + IntToStr(S1 - S0));
  Check(H1.TotalAllocated >= H0.TotalAllocated + N * 100, 'GetHeapStatus.TotalAllocated grew');
  Check(H1.TotalAddrSpace >= H1.TotalAllocated, 'TotalAddrSpace covers TotalAllocated');
  Check(H1.TotalCommitted = H1.TotalAllocated + H1.TotalFree + H1.Overhead,
    'committed = allocated + free + overhead');
  CheckEquals(H1.FreeSmall + H1.FreeBig + H1.Unused, H1.TotalFree, 'free = small + big + unused');
  CheckEquals(0, H1.HeapErrorCode, 'HeapErrorCode');
  L.Free;
  Check(GetAllocMemCount <= C0 + 8, 'freed blocks leave the count');
end;

procedure TestExports;
var
  P, Q: Pointer;
  R: Integer;
begin
  P := SysGetMem(100);
  Check(P <> nil, 'SysGetMem');
  FillChar(P^, 100, 7);
  Q := SysReallocMem(P, 100000);
  Check((Q <> nil) and (PByte(Q)[99] = 7), 'SysReallocMem keeps the data');
  Check(SysRegisterExpectedMemoryLeak(Q), 'SysRegisterExpectedMemoryLeak');
  Check(not SysRegisterExpectedMemoryLeak(Q), 'SysRegisterExpectedMemoryLeak twice: False');
  Check(SysUnregisterExpectedMemoryLeak(Q), 'SysUnregisterExpectedMemoryLeak');
  Check(not SysUnregisterExpectedMemoryLeak(Q), 'SysUnregisterExpectedMemoryLeak twice: False');
  CheckEquals(0, SysFreeMem(Q), 'SysFreeMem: 0 for a live block');
  Check(SysFreeMem(Q) <> 0, 'SysFreeMem: non-zero for a freed block');
  Check(SysGetMem(-1) = nil, 'SysGetMem(-1) = nil');
  P := SysAllocMem(3000);
  Check((P <> nil) and (PByte(P)[0] = 0) and (PByte(P)[2999] = 0), 'SysAllocMem is zeroed');
  CheckEquals(0, SysFreeMem(P), 'SysFreeMem of the SysAllocMem block');
  R := HeapAddRef;
  CheckEquals(InstallRefCount + 1, R, 'HeapAddRef counts');
  CheckEquals(InstallRefCount, HeapRelease, 'HeapRelease counts down');
  DumpBlocks;
  Check(True, 'DumpBlocks returns');
  P := GetMemory(200);
  Check(P <> nil, 'GetMemory (cdecl)');
  P := ReallocMemory(P, 5000);
  Check(P <> nil, 'ReallocMemory (cdecl)');
  CheckEquals(0, FreeMemory(P), 'FreeMemory (cdecl)');
  CheckEquals(0, FreeMemory(nil), 'FreeMemory(nil) = 0');
  P := ReallocMemory(nil, 64);
  Check(P <> nil, 'ReallocMemory(nil, 64) allocates');
  CheckEquals(0, FreeMemory(P), 'and FreeMemory frees it');
end;

begin
  Check(FastMM_GetInstallationState = mmisOtherThirdPartyMemoryManagerInstalled,
    'FastMMC, used after ShareMem, does not install over it');
  Check(InstallRefCount >= 1, 'HeapAddRef at the install: ' + IntToStr(InstallRefCount));
  TestCounters;
  TestExports;
  Halt(Finish('test_sharemem'));
end.
