{ SPDX-License-Identifier: MIT }
{ The DLL's debug mode and its companions from Pascal, through FastMM5's routines: entering and
  leaving (nested), the RTL working on debug blocks, blocks of either kind freed in either mode,
  a write past a block's end and a write after free found by FastMM_ScanDebugBlocksForCorruption
  (which raises EInvalidPointer, as FastMM5's) and reported to the event log
  FastMM_SetEventLogFilename names, the erase modes, and the memory
  usage limit turning into EOutOfMemory. }
program test_debug;

uses
  FastMMC, SysUtils, Classes, FmmTest, RaiseChecks;

const
  EventGuardCorrupted = 2;
  EventWriteAfterFree = 3;

var
  LogName: UnicodeString;

procedure TestModes;
var
  L: TStringList;
  Before, During: Pointer;
  I: Integer;
  S: string;
begin
  Check(not FastMM_DebugModeActive, 'debug mode is off at start');
  GetMem(Before, 100);
  Check(FastMM_EnterDebugMode, 'FastMM_EnterDebugMode');
  Check(FastMM_DebugModeActive, 'debug mode is on');
  Check(FastMM_EnterDebugMode and FastMM_ExitDebugMode and FastMM_DebugModeActive, 'calls nest');
  FastMM_SetDebugModeStackTraceEntryCount(12);
  CheckEquals(12, FastMM_GetDebugModeStackTraceEntryCount, 'the stack trace depth');
  L := TStringList.Create;
  for I := 0 to 999 do
    L.Add('debug ' + IntToStr(I));
  L.Sort;
  S := L.CommaText;
  Check((L.Count = 1000) and (Length(S) > 5000), 'the RTL works on debug blocks');
  GetMem(During, 5000);
  FreeMem(Before); {a normal block freed in debug mode}
  Check(FastMM_ScanDebugBlocksForCorruption, 'intact debug blocks pass the scan');
  Check(FastMM_ExitDebugMode, 'FastMM_ExitDebugMode');
  Check(not FastMM_DebugModeActive, 'debug mode is off again');
  L.Free; {debug blocks freed outside debug mode}
  FreeMem(During);
  CheckEquals(0, FastMMC_CheckHeap, 'the heap is consistent after the mixed frees');
end;

procedure TestCorruption;
var
  P: PByte;
  Saved: Byte;
  Guard0, Freed0: NativeUInt;
  Log: TStringList;
begin
  FastMM_SetEventLogFilename(PWideChar(LogName));
  FastMM_DeleteEventLogFile;
  Guard0 := FastMMC_GetDebugEventCount(EventGuardCorrupted);
  Freed0 := FastMMC_GetDebugEventCount(EventWriteAfterFree);
  FastMM_EnterDebugMode;
  GetMem(P, 100);
  Saved := P[100];
  P[100] := Saved xor $FF; {one byte past the end: the guard}
  Check(ScanRaises, 'a write past the end: the scan raises EInvalidPointer');
  Check(FastMMC_GetDebugEventCount(EventGuardCorrupted) > Guard0, 'the DLL counted a corrupted guard');
  P[100] := Saved;
  Check(not ScanRaises and FastMM_ScanDebugBlocksForCorruption, 'with the guard restored the scan passes');
  FreeMem(P);
  P[10] := P[10] xor $55; {after the free: the block sits in the quarantine}
  Check(ScanRaises, 'a write after free: the scan raises EInvalidPointer');
  Check(FastMMC_GetDebugEventCount(EventWriteAfterFree) > Freed0, 'the DLL counted a write after free');
  P[10] := P[10] xor $55;
  FastMM_ExitDebugMode;
  Check(FileExists(UTF8Encode(LogName)), 'the faults are in the event log FastMM_SetEventLogFilename named');
  if FileExists(UTF8Encode(LogName)) then
  begin
    Log := TStringList.Create;
    Log.LoadFromFile(UTF8Encode(LogName));
    Check(Log.Count > 3, 'the event log has the reports');
    Log.Free;
  end;
end;

procedure TestErase;
var
  P: PByte;
begin
  Check(FastMM_BeginEraseAllocatedBlockContent and FastMM_EraseAllocatedBlockContentActive, 'erase new blocks: on');
  GetMem(P, 64);
  Check((P[0] = $90) and (P[63] = $90), 'new blocks are filled with $90');
  FreeMem(P);
  Check(FastMM_EndEraseAllocatedBlockContent and not FastMM_EraseAllocatedBlockContentActive, 'erase new blocks: off');
  Check(FastMM_BeginEraseFreedBlockContent and FastMM_EraseFreedBlockContentActive, 'erase freed blocks: on');
  Check(FastMM_EndEraseFreedBlockContent and not FastMM_EraseFreedBlockContentActive, 'erase freed blocks: off');
end;

procedure TestLimit;
var
  P: Pointer;
  Refused: Boolean;
begin
  FastMM_SetMemoryUsageLimit(FastMM_GetCurrentMemoryUsage + 4 * 1024 * 1024);
  Check(FastMM_GetMemoryUsageLimit > 0, 'FastMM_GetMemoryUsageLimit gives the limit set');
  Refused := False;
  P := nil;
  try
    GetMem(P, 64 * 1024 * 1024);
  except
    on EOutOfMemory do
      Refused := True;
  end;
  Check(Refused and (P = nil), 'past the limit GetMem raises EOutOfMemory');
  GetMem(P, 1000);
  Check(P <> nil, 'below the limit GetMem works');
  FreeMem(P);
  FastMM_SetMemoryUsageLimit(0);
  CheckEquals(0, FastMM_GetMemoryUsageLimit, 'no limit');
  GetMem(P, 64 * 1024 * 1024);
  Check(P <> nil, 'without the limit the same GetMem works');
  FreeMem(P);
end;

begin
  LogName := UnicodeString(ChangeFileExt(ParamStr(0), '') + '_events.txt');
  Check(FastMMC_Installed, 'FastMMC is installed');
  TestModes;
  TestCorruption;
  TestErase;
  TestLimit;
  CheckEquals(0, FastMMC_CheckHeap, 'the DLL''s heap is consistent');
  Halt(Finish('test_debug'));
end.
