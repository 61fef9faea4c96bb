{ SPDX-License-Identifier: MIT }
{ Every routine of FastMMC's interface, called once with its FastMM5 signature, from a program
  compiled in mode delphi (test_modes_delphi) and in mode objfpc (test_modes_objfpc): the unit
  and code written against FastMM5 compile in both, and the routines give real values. }
program test_modes;

{$H+}

uses
  FastMMC, SysUtils, Classes, FmmTest;

type
  TLeaky = class
    X: Integer;
  end;

{Called in a procedure of its own that makes no string: a string made while debug mode is on is
a debug block until it is freed.}
procedure DebugRoutines(out AOk: array of Boolean);
var
  P: Pointer;
begin
  AOk[0] := FastMM_EnterDebugMode and FastMM_DebugModeActive;
  FastMMC_SetScanForCorruptionBeforeEveryOperation(True);
  GetMem(P, 50);
  FreeMem(P);
  FastMMC_SetScanForCorruptionBeforeEveryOperation(False);
  AOk[1] := FastMM_ScanDebugBlocksForCorruption;
  FastMM_SetDebugModeStackTraceEntryCount(FastMM_GetDebugModeStackTraceEntryCount);
  AOk[2] := FastMM_ExitDebugMode and not FastMM_DebugModeActive;
  AOk[3] := FastMM_BeginEraseFreedBlockContent and FastMM_EraseFreedBlockContentActive and
    FastMM_EndEraseFreedBlockContent;
  AOk[4] := FastMM_BeginEraseAllocatedBlockContent and FastMM_EraseAllocatedBlockContentActive and
    FastMM_EndEraseAllocatedBlockContent;
  FastMM_SetMemoryUsageLimit(NativeUInt(1) shl 30);
  AOk[5] := FastMM_GetMemoryUsageLimit = NativeUInt(1) shl 30;
  FastMM_SetMemoryUsageLimit(0);
end;

var
  DebugOk: array[0..5] of Boolean;
  P, Q: Pointer;
  Status: THeapStatus;
  Summary: TFastMM_UsageSummary;
  MMState: TFastMM_MemoryManagerState;
  State: TFastMMC_State;
  Leaks: TFastMM_RegisteredMemoryLeaks;
  LogName, StateName: UnicodeString;
  Lines: TStringList;
  Mode: string;
begin
{$ifdef FPC_OBJFPC}
  Mode := 'objfpc';
{$else}
  Mode := 'delphi';
{$endif}
  Check(FastMM_GetInstallationState = mmisInstalled, Mode + ': installed');
  Check(FastMMC_Installed and (FastMMC_DLLHandle <> 0), Mode + ': FastMMC_Installed, FastMMC_DLLHandle');
  Check(not FastMM_Initialize, Mode + ': FastMM_Initialize refuses a second install');
  Check(FastMM_AttemptToUseSharedMemoryManager and FastMM_ShareMemoryManager, Mode + ': sharing is on');
  Check(FastMM_GetCurrentMinimumAddressAlignment = maa16Bytes, Mode + ': 16-byte alignment');

  {Core.}
  P := FastMM_GetMem(1000);
  Check((P <> nil) and FastMMC_OwnsBlock(P), Mode + ': FastMM_GetMem');
  Check((FastMM_BlockCurrentUserBytes(P) >= 1000) and
    (FastMM_BlockMaximumUserBytes(P) = FastMM_BlockCurrentUserBytes(P)), Mode + ': FastMM_Block*UserBytes');
  Q := FastMM_ReallocMem(P, 100000);
  Check(Q <> nil, Mode + ': FastMM_ReallocMem');
  CheckEquals(0, FastMM_FreeMem(Q), Mode + ': FastMM_FreeMem');
  Check(FastMM_FreeMem(Q) <> 0, Mode + ': FastMM_FreeMem refuses a freed block');
  P := FastMM_AllocMem(64);
  Check((P <> nil) and (PByte(P)[63] = 0), Mode + ': FastMM_AllocMem');
  FastMM_FreeMem(P);

  {Statistics.}
  GetMem(P, 200000);
  Status := FastMM_GetHeapStatus;
  Check(Status.TotalAllocated >= 200000, Mode + ': FastMM_GetHeapStatus.TotalAllocated');
  Check(Status.TotalAddrSpace >= Status.TotalAllocated, Mode + ': FastMM_GetHeapStatus.TotalAddrSpace');
  Status := GetHeapStatus;
  Check(Status.TotalAllocated >= 200000, Mode + ': System.GetHeapStatus comes from the DLL');
  Check(GetFPCHeapStatus.CurrHeapUsed >= 200000, Mode + ': System.GetFPCHeapStatus comes from the DLL');
  Summary := FastMM_GetUsageSummary;
  Check((Summary.AllocatedBytes >= 200000) and (Summary.EfficiencyPercentage > 0) and
    (Summary.EfficiencyPercentage <= 100), Mode + ': FastMM_GetUsageSummary');
  Check(FastMM_GetCurrentMemoryUsage >= Summary.AllocatedBytes, Mode + ': FastMM_GetCurrentMemoryUsage');
  FastMM_GetMemoryManagerState(MMState);
  Check((MMState.SmallBlockTypeCount > 10) and (MMState.SmallBlockTypeStates[0].InternalBlockSize > 0) and
    (MMState.SmallBlockTypeStates[0].UseableBlockSize < MMState.SmallBlockTypeStates[0].InternalBlockSize),
    Mode + ': FastMM_GetMemoryManagerState: the size classes');
  Check(MMState.AllocatedMediumBlockCount + MMState.AllocatedLargeBlockCount >= 1, Mode + ': FastMM_GetMemoryManagerState: the 200000-byte block');
  Check(FastMMC_GetState(State) and (State.SmallClassCount = MMState.SmallBlockTypeCount), Mode + ': FastMMC_GetState');
  FreeMem(P);
  Check(FastMM_ProcessAllPendingFrees, Mode + ': FastMM_ProcessAllPendingFrees');
  FastMMC_FlushThreadCache;
  FastMMC_ReleaseFreeMemory;
  CheckEquals(0, FastMMC_CheckHeap, Mode + ': FastMMC_CheckHeap');

  {Expected leaks, all three overloads.}
  GetMem(P, 10);
  Check(FastMM_RegisterExpectedMemoryLeak(P), Mode + ': register by pointer');
  Check(FastMM_RegisterExpectedMemoryLeak(TLeaky, 2), Mode + ': register by class');
  Check(FastMM_RegisterExpectedMemoryLeak(NativeInt(48), 3), Mode + ': register by size');
  Leaks := FastMM_GetRegisteredMemoryLeaks;
  CheckEquals(3, Length(Leaks), Mode + ': FastMM_GetRegisteredMemoryLeaks');
  Check(FastMM_UnregisterExpectedMemoryLeak(P), Mode + ': unregister by pointer');
  Check(FastMM_UnregisterExpectedMemoryLeak(TLeaky, 2), Mode + ': unregister by class');
  Check(FastMM_UnregisterExpectedMemoryLeak(NativeInt(48), 3), Mode + ': unregister by size');
  Check(not FastMM_UnregisterExpectedMemoryLeak(TLeaky), Mode + ': nothing left to unregister');
  CheckEquals(0, Length(FastMM_GetRegisteredMemoryLeaks), Mode + ': no registrations left');
  FreeMem(P);

  {Debug mode, erase modes, the memory usage limit (test_debug tries them in earnest).}
  DebugRoutines(DebugOk);
  Check(DebugOk[0], Mode + ': FastMM_EnterDebugMode, FastMM_DebugModeActive');
  Check(DebugOk[1], Mode + ': FastMM_ScanDebugBlocksForCorruption');
  Check(DebugOk[2], Mode + ': FastMM_ExitDebugMode');
  Check(DebugOk[3], Mode + ': FastMM_*EraseFreedBlockContent*');
  Check(DebugOk[4], Mode + ': FastMM_*EraseAllocatedBlockContent*');
  Check(DebugOk[5], Mode + ': FastMM_Set/GetMemoryUsageLimit');
  CheckEquals(0, FastMMC_ReportDebugBlockLeaks, Mode + ': FastMMC_ReportDebugBlockLeaks: no live debug block');
  CheckEquals(0, FastMMC_GetDebugEventCount(1), Mode + ': FastMMC_GetDebugEventCount');

  {Files.}
  LogName := UnicodeString(ChangeFileExt(ParamStr(0), '') + '_events.txt');
  FastMM_SetEventLogFilename(PWideChar(LogName));
  Check(FastMM_GetEventLogFilename = LogName, Mode + ': FastMM_SetEventLogFilename / FastMM_GetEventLogFilename');
  FastMM_DeleteEventLogFile;
  FastMM_SetDefaultEventLogFilename;
  Check(Pos('_MemoryManager_EventLog.txt', UTF8Encode(UnicodeString(FastMM_GetEventLogFilename))) > 0,
    Mode + ': FastMM_SetDefaultEventLogFilename');
  StateName := UnicodeString(ChangeFileExt(ParamStr(0), '') + '_state.txt');
  Check(FastMM_LogStateToFile(PWideChar(StateName), PWideChar(UnicodeString('details from ' + Mode))),
    Mode + ': FastMM_LogStateToFile');
  Lines := TStringList.Create;
  Lines.LoadFromFile(UTF8Encode(StateName));
  Check((Pos('K Allocated', Lines.Text) > 0) and (Pos('% Efficiency', Lines.Text) > 0) and
    (Pos(' bytes avg.)', Lines.Text) > 0) and (Pos('details from ' + Mode, Lines.Text) > 0),
    Mode + ': the state log has the summary, the usage by class and the details');
  Lines.Free;
  DeleteFile(UTF8Encode(StateName));
  Halt(Finish('test_modes_' + Mode));
end.
