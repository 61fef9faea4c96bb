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

var
  Before, Installed, Again, After: TMemoryManager;
  P0, P1, P2, P3: Pointer;
  B: NativeUInt;
  S: AnsiString;
begin
  Check(FastMM_GetInstallationState = mmisDefaultMemoryManagerInUse, 'not installed at start');
  CheckEquals(0, FastMMC_DLLHandle, 'the DLL is not loaded before FastMM_Initialize');
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
  Check(CodeOf(Installed.DoneThread) = CodeOf(Before.DoneThread), 'DoneThread kept from the previous manager');
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
