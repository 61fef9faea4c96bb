{ SPDX-License-Identifier: MIT }
{ Installing and uninstalling by hand (the unit compiled with FastMM_DisableAutomaticInstall,
  as FastMM5 allows): FastMM_Initialize installs once and refuses a second time; blocks of the
  manager that was there before keep working; FastMM_Finalize uninstalls cleanly: new blocks
  come from the previous manager again, and the DLL's blocks still alive can be freed and
  resized. The DLL is never unloaded. }
program test_install;

uses
  FastMMC, SysUtils, FmmTest;

function CodeOf(const AProcVar): Pointer;
begin
  Result := PPointer(@AProcVar)^;
end;

{Before the DLL is loaded every routine gives the answer it gives without a DLL (the unit's
stubs stand in for its exports), and none crashes.}
procedure CheckWithoutDll;
var
  State: TFastMMC_State;
  Local: Integer;
begin
  Check(FastMM_GetMem(16) = nil, 'no DLL: FastMM_GetMem is nil');
  Check(FastMM_AllocMem(16) = nil, 'no DLL: FastMM_AllocMem is nil');
  CheckEquals(1, FastMM_FreeMem(@Local), 'no DLL: FastMM_FreeMem fails');
  Check(FastMM_ReallocMem(@Local, 32) = nil, 'no DLL: FastMM_ReallocMem is nil');
  Check(FastMM_DebugGetMem(16) = nil, 'no DLL: FastMM_DebugGetMem is nil');
  CheckEquals(0, FastMM_BlockCurrentUserBytes(@Local), 'no DLL: no block has a size');
  Check(not FastMMC_OwnsBlock(@Local), 'no DLL: no block is the DLL''s');
  CheckEquals(-1, FastMMC_CheckHeap, 'no DLL: FastMMC_CheckHeap is -1');
  Check(not FastMMC_GetState(State), 'no DLL: FastMMC_GetState is False');
  CheckEquals(0, State.OSBytesReserved, 'no DLL: the state is zero');
  Check(not FastMM_DebugModeActive, 'no DLL: debug mode is off');
  Check(not FastMM_EraseFreedBlockContentActive, 'no DLL: erasing freed blocks is off');
  Check(FastMM_ScanDebugBlocksForCorruption, 'no DLL: the scan finds nothing');
  CheckEquals(0, FastMM_GetMemoryUsageLimit, 'no DLL: no usage limit');
  CheckEquals(0, FastMM_GetDebugModeStackTraceEntryCount, 'no DLL: no stack trace entries');
  CheckEquals(0, FastMMC_GetDebugEventCount(1), 'no DLL: no debug events');
  Check(FastMM_GetCurrentMinimumAddressAlignment = maa16Bytes, 'no DLL: 16-byte alignment');
  Check(not FastMM_WriteUsageReport(nil), 'no DLL: no usage report');
  Check(FastMM_ProcessAllPendingFrees, 'no DLL: nothing pending');
  FastMMC_FlushThreadCache;
  FastMMC_ReleaseFreeMemory;
  FastMM_SetMemoryUsageLimit(0);
end;

var
  Before, Installed, Again, After: TMemoryManager;
  P0, P1, P2, P3: Pointer;
  B: NativeUInt;
  S: AnsiString;
begin
  Check(FastMM_GetInstallationState = mmisDefaultMemoryManagerInUse, 'not installed at start');
  CheckEquals(0, FastMMC_DLLHandle, 'the DLL is not loaded before FastMM_Initialize');
  CheckWithoutDll;
  Check(FastMM_RegisterExpectedMemoryLeak(TObject, 2) and FastMM_UnregisterExpectedMemoryLeak(TObject, 2),
    'expected leaks by class can be registered before the install');
  GetMemoryManager(Before);
  GetMem(P0, 500);
  S := 'before-' + IntToStr(1);

  Check(FastMM_Initialize, 'FastMM_Initialize installs');
  Check(FastMM_GetInstallationState = mmisInstalled, 'installed');
  GetMemoryManager(Installed);
  Check(CodeOf(Installed.GetMem) <> CodeOf(Before.GetMem), 'the memory manager changed');
  Check(not FastMM_Initialize, 'a second FastMM_Initialize is refused');
  GetMemoryManager(Again);
  Check((CodeOf(Again.GetMem) = CodeOf(Installed.GetMem)) and (CodeOf(Again.FreeMem) = CodeOf(Installed.FreeMem)),
    'the refused install changed nothing');
{$ifdef MSWINDOWS}
  Check(CodeOf(Installed.DoneThread) = CodeOf(Before.DoneThread), 'DoneThread kept from the previous manager');
{$else}
  {Linux: FastMMC's own, which flushes the ending thread's cache and calls the previous one.}
  Check((CodeOf(Installed.DoneThread) <> nil) and (CodeOf(Installed.DoneThread) <> CodeOf(Before.DoneThread)),
    'DoneThread is FastMMC''s');
{$endif}
  Check(CodeOf(Installed.InitThread) = CodeOf(Before.InitThread), 'InitThread kept from the previous manager');

  GetMem(P1, 500);
  Check(FastMMC_OwnsBlock(P1), 'after the install GetMem comes from the DLL');
  Check(not FastMMC_OwnsBlock(P0), 'the block from before is not the DLL''s');
  FreeMem(P0); {back to the previous manager}
  S := S + '-after';
  Check(S = 'before-1-after', 'a string from before, grown after');
  GetMem(P3, 100);

  B := DllBlocks;
  Check(FastMM_Finalize, 'FastMM_Finalize uninstalls');
  Check(FastMM_GetInstallationState = mmisDefaultMemoryManagerInUse, 'uninstalled');
  GetMemoryManager(After);
  Check(CodeOf(After.GetMem) = CodeOf(Before.GetMem), 'GetMem is the previous manager''s again');
  GetMem(P2, 500);
  Check(not FastMMC_OwnsBlock(P2), 'after the uninstall GetMem comes from the previous manager');
  Check(FastMMC_DLLHandle <> 0, 'the DLL stays loaded: its blocks stay valid');
  ReallocMem(P1, 100000);
  Check(FastMMC_OwnsBlock(P1), 'a DLL block resized after the uninstall stays in the DLL');
  FreeMem(P1);
  FreeMem(P3);
  CheckEquals(B - 2, DllBlocks, 'DLL blocks freed after the uninstall went back to the DLL');
  FreeMem(P2);
  S := '';
  Check(not FastMM_Finalize, 'a second FastMM_Finalize does nothing');
  CheckEquals(0, FastMMC_CheckHeap, 'the DLL''s heap is consistent');
  Halt(Finish('test_install'));
end.
