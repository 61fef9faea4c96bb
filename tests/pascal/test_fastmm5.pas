{ SPDX-License-Identifier: MIT }
{ FastMM5's interface as FastMM5 documents it, from a program that names only FastMM5's
  routines, types, constants and variables (and the RTL's): built with FastMMC in place of
  FastMM5 in its uses clause, as a Delphi shop would switch. Each check states what FastMM5
  says the routine does:
    - the debug block header: 64 bytes, FastMM5's field offsets on Win32 and Win64, the footer
      right after the user bytes, the checksums (xor of Cardinals seeded with $FFFFFFFF);
    - FastMM_DetectClassInstance and FastMM_DetectStringData on objects, strings and other data;
    - FastMM_GetMemoryMap, FastMM_GetMemoryManagerState per size class;
    - FastMM_ScanDebugBlocksForCorruption raising EInvalidPointer on damage, a second FreeMem, a
      ReallocMem of a freed block and an interior pointer raising EInvalidPointer, in normal
      and debug mode; FastMM_DebugFreeMem refusing a misaligned pointer;
    - Enter/Exit debug mode and the erase modes refused (False, mode off) while another memory
      manager is installed, the counters moving all the same;
    - the stack trace handlers, the no-op routines and the debug support library (a stand-in,
      fake_support.dll, named through FastMM_DebugSupportLibraryName);
    - the optimization strategy, the debug mode options, the alignment requests, the templates
      of the state log.
    - the DLL's real debug blocks read through TFastMM_DebugBlockHeader (fields, FastMM5's
      checksums, the footer's traces), the debug entry points in normal mode, the options;
    - FastMM5's variables as the DLL uses them: FastMM_CurrentAllocationGroup,
      FastMM_LastAllocationNumber, FastMM_GetStackTrace, FastMM_ConvertStackTraceToText,
      FastMM_AllocateTopDown; the DLL's events written with FastMM5's templates and routed by its
      sets; a virtual call on a freed object; the quarantine counted free.
  FastMM_WalkBlocks is tested in test_walk.pas; the contention counters cannot be made to move
  from here (tests/test_debug_internals.c holds the arenas' locks to see them count): they are
  named so the program compiles as it would against FastMM5. }
program test_fastmm5;

{$H+}

uses
  FastMMC, SysUtils, Classes, RaiseChecks;

{$ifndef MSWINDOWS}
function gettid: Longint; cdecl; external 'c';
{$endif}

{The thread id a debug block records: Windows' thread id; on Linux the kernel's (gettid, as ps and
gdb show it), since GetCurrentThreadId is a pthread_t there, wider than the header's field.}
function ThisThreadId: Cardinal;
begin
{$ifdef MSWINDOWS}
  Result := GetCurrentThreadId;
{$else}
  Result := Cardinal(gettid);
{$endif}
end;

var
  Checks, Failures: Integer;

procedure Check(ACondition: Boolean; const AWhat: string);
begin
  Inc(Checks);
  if not ACondition then
  begin
    Inc(Failures);
    WriteLn('FAILED: ', AWhat);
  end;
end;

procedure CheckEquals(AExpected, AActual: Int64; const AWhat: string);
begin
  Check(AExpected = AActual, AWhat + ' (expected ' + IntToStr(AExpected) + ', got ' + IntToStr(AActual) + ')');
end;

{------------------------The debug block header------------------------}

function OffsetOf(const ARecord; const AField): Integer;
begin
  Result := Integer(NativeUInt(@AField) - NativeUInt(@ARecord));
end;

procedure TestDebugBlockHeader;
const
{$ifdef CPU64}
  CHeaderCheckSumOffset = 20;
{$else}
  CHeaderCheckSumOffset = 28;
{$endif}
  CUserSize = 13;
  CEntries = 3;
var
  H: TFastMM_DebugBlockHeader;
  Buffer: array[0..511] of Byte;
  P: PFastMM_DebugBlockHeader;
  Entry: PNativeUInt;
  I: Integer;
  Offset: NativeInt;
  Sum: Cardinal;
begin
  FillChar(H, SizeOf(H), 0);
  CheckEquals(64, SizeOf(TFastMM_DebugBlockHeader), 'TFastMM_DebugBlockHeader is 64 bytes');
  CheckEquals(CHeaderCheckSumOffset, OffsetOf(H, H.HeaderCheckSum), 'HeaderCheckSum offset');
  CheckEquals(CHeaderCheckSumOffset + 4, OffsetOf(H, H.AllocationTickCount), 'AllocationTickCount offset');
  CheckEquals(CHeaderCheckSumOffset + 8, OffsetOf(H, H.AllocationNumber), 'AllocationNumber offset');
  CheckEquals(CHeaderCheckSumOffset + 12, OffsetOf(H, H.UserSize), 'UserSize offset');
  CheckEquals(CHeaderCheckSumOffset + 12 + SizeOf(Pointer), OffsetOf(H, H.PreviouslyUsedByClass),
    'PreviouslyUsedByClass offset');
  CheckEquals(48, OffsetOf(H, H.AllocationGroup), 'AllocationGroup offset');
  CheckEquals(52, OffsetOf(H, H.AllocatedByThread), 'AllocatedByThread offset');
  CheckEquals(56, OffsetOf(H, H.FreedByThread), 'FreedByThread offset');
  CheckEquals(60, OffsetOf(H, H.DebugFeatureFlags), 'DebugFeatureFlags offset');
  CheckEquals(61, OffsetOf(H, H.StackTraceEntryCount), 'StackTraceEntryCount offset');
  CheckEquals(62, OffsetOf(H, H.DebugBlockFlags), 'DebugBlockFlags offset');

  {A debug block laid out by hand: the header, 13 user bytes, the footer checksum, then 3
  allocation and 3 free stack trace entries.}
  FillChar(Buffer, SizeOf(Buffer), $5A);
  P := @Buffer[0];
  P^.UserSize := CUserSize;
  P^.StackTraceEntryCount := CEntries;
  P^.AllocationNumber := 77;
  Check(Pointer(P^.DebugFooterPtr) = @Buffer[64 + CUserSize], 'the footer follows the user bytes');
  Check(Pointer(P^.DebugFooter_AllocationStackTracePtr) = @Buffer[64 + CUserSize + 4],
    'the allocation stack trace follows the footer checksum');
  Check(Pointer(P^.DebugFooter_FreeStackTracePtr) = @Buffer[64 + CUserSize + 4 + CEntries * SizeOf(Pointer)],
    'the free stack trace follows the allocation stack trace');
  Entry := P^.DebugFooter_AllocationStackTracePtr;
  for I := 0 to 2 * CEntries - 1 do
  begin
    Entry^ := NativeUInt($10203040 + I * $01010101);
    Inc(Entry);
  end;
  P^.CalculateAndSetHeaderAndFooterCheckSums;
  Sum := $FFFFFFFF;
  Offset := CHeaderCheckSumOffset + 4;
  while Offset < 64 do
  begin
    Sum := Sum xor PCardinal(@Buffer[Offset])^;
    Inc(Offset, 4);
  end;
  CheckEquals(Sum, P^.HeaderCheckSum, 'the header checksum: the Cardinals after it, xor, from $FFFFFFFF');
  Sum := $FFFFFFFF;
  Offset := 64 + CUserSize + 4;
  while Offset < 64 + CUserSize + 4 + 2 * CEntries * SizeOf(Pointer) do
  begin
    Sum := Sum xor PCardinal(@Buffer[Offset])^;
    Inc(Offset, 4);
  end;
  CheckEquals(Sum, PCardinal(@Buffer[64 + CUserSize])^, 'the footer checksum: both stack traces, xor, from $FFFFFFFF');
  Inc(P^.AllocationNumber);
  Check(P^.CalculateHeaderCheckSum <> P^.HeaderCheckSum, 'a changed header field changes the header checksum');
  Dec(P^.AllocationNumber);
  Check(P^.CalculateHeaderCheckSum = P^.HeaderCheckSum, 'restored, the header checksum matches again');
  Inc(P^.DebugFooter_FreeStackTracePtr^);
  Check(P^.CalculateFooterCheckSum <> P^.DebugFooterPtr^, 'a changed stack trace entry changes the footer checksum');
end;

{------------------------What a block holds------------------------}

type
  TShape = class(TPersistent)
  public
    Corners: Integer;
  end;
  {A name longer than 63 characters, as specialized generics often have.}
  TShapeWithAVeryLongNameOfTheKindThatSpecializedGenericClassesOftenHave = class(TShape);

procedure TestDetectClassInstance;
var
  List: TStringList;
  Shape: TShape;
  Plain, Long: TObject;
  Buffer: array[0..7] of Pointer;
begin
  List := TStringList.Create;
  Shape := TShape.Create;
  Plain := TObject.Create;
  Check(FastMM_DetectClassInstance(Pointer(List)) = TStringList, 'a TStringList is found to be one');
  Check(FastMM_DetectClassInstance(Pointer(Shape)) = TShape, 'an object of the program''s own class');
  Check(FastMM_DetectClassInstance(Pointer(Plain)) = TObject, 'a TObject');
  Long := TShapeWithAVeryLongNameOfTheKindThatSpecializedGenericClassesOftenHave.Create;
  Check(FastMM_DetectClassInstance(Pointer(Long)) = TShapeWithAVeryLongNameOfTheKindThatSpecializedGenericClassesOftenHave,
    'a class whose name is longer than 63 characters');
  Long.Free;
  FillChar(Buffer, SizeOf(Buffer), 0);
  Check(FastMM_DetectClassInstance(@Buffer) = nil, 'zeros are no object');
  Buffer[0] := @Buffer[1];
  Check(FastMM_DetectClassInstance(@Buffer) = nil, 'a pointer to readable data that is no class');
  Buffer[0] := Pointer(NativeUInt($7FF0FFF0));
  Check(FastMM_DetectClassInstance(@Buffer) = nil, 'a pointer to memory nobody mapped');
  Check(FastMM_DetectClassInstance(Pointer(TStringList)) = nil, 'a class reference is not an instance');
  Plain.Free;
  Shape.Free;
  List.Free;
end;

const
  {The header before a string's characters in this compiler's string blocks.}
{$ifdef FPC}
  {$ifdef CPU64}
  CStringHeaderSize = 24;
  {$else}
  CStringHeaderSize = 12;
  {$endif}
{$else}
  {$ifdef CPUX64}
  CStringHeaderSize = 16;
  {$else}
  CStringHeaderSize = 12;
  {$endif}
{$endif}

procedure TestDetectStringData;
var
  A: AnsiString;
  U: UnicodeString;
  Block: PByte;
  Zeros: Pointer;
begin
  A := 'ansi text number ' + AnsiString(IntToStr(Random(1000) + 1000));
  Block := PByte(Pointer(A)) - CStringHeaderSize;
  Check(FastMM_DetectStringData(Block, FastMM_BlockMaximumUserBytes(Block)) = sdtAnsiString,
    'an AnsiString''s block holds ANSI string data');
  Check(FastMM_DetectStringData(Block, CStringHeaderSize + Length(A)) = sdtNotAString,
    'not when the block has no room for the terminating #0');
  U := 'unicode text number ' + UnicodeString(IntToStr(Random(1000) + 1000));
  Block := PByte(Pointer(U)) - CStringHeaderSize;
  Check(FastMM_DetectStringData(Block, FastMM_BlockMaximumUserBytes(Block)) = sdtUnicodeString,
    'a UnicodeString''s block holds Unicode string data');
  A := 'control' + #1 + AnsiString(IntToStr(Random(1000)));
  Block := PByte(Pointer(A)) - CStringHeaderSize;
  Check(FastMM_DetectStringData(Block, FastMM_BlockMaximumUserBytes(Block)) = sdtNotAString,
    'a character below tab: not taken for text');
  Zeros := AllocMem(200);
  Check(FastMM_DetectStringData(Zeros, 200) = sdtNotAString, 'zeros are no string');
  FreeMem(Zeros);
end;

{------------------------The address space and the size classes------------------------}

procedure TestMemoryMap;
var
  Map: TMemoryMap;
  Big: Pointer;
  Chunk, I, Ours: NativeUInt;
begin
  GetMem(Big, 3 * 1024 * 1024);
  FastMM_GetMemoryMap(Map);
  Ours := 0;
  for I := 0 to High(Map) do
    if Map[I] = csAllocated then
      Inc(Ours);
  Chunk := NativeUInt(Big) shr 16;
  {The map covers the lower 4 GB (all of a 32-bit process); Wine puts the DLL's memory there on
  Win64 too.}
  if Chunk <= High(Map) then
  begin
    Check(Map[Chunk] = csAllocated, 'the memory of a 3 MB block is csAllocated');
    Check(Ours >= 48, 'its 48 chunks and more are the memory manager''s');
  end;
{$ifndef WIN64}
  Check(Map[NativeUInt(@Checks) shr 16] = csSysAllocated, 'the program''s image is csSysAllocated');
{$endif}
  FreeMem(Big);
  {A freed large block is kept for reuse (the DLL's large cache) until it is given back.}
  FastMMC_ReleaseFreeMemory;
  FastMM_GetMemoryMap(Map);
  if Chunk <= High(Map) then
    Check(Map[Chunk] <> csAllocated, 'once freed and given back, the large block''s memory is no longer the memory manager''s');
end;

procedure TestMemoryManagerState;
const
  CBlocks = 100;
  CSize = 40;
var
  Before, During, After: TFastMM_MemoryManagerState;
  Blocks: array[0..CBlocks - 1] of Pointer;
  I, C: Integer;
  Ascending: Boolean;
begin
  FastMM_GetMemoryManagerState(Before);
  for I := 0 to CBlocks - 1 do
    GetMem(Blocks[I], CSize);
  FastMM_GetMemoryManagerState(During);
  for I := 0 to CBlocks - 1 do
    FreeMem(Blocks[I]);
  FastMM_GetMemoryManagerState(After);
  Ascending := Before.SmallBlockTypeCount > 1;
  for I := 1 to Integer(Before.SmallBlockTypeCount) - 1 do
    Ascending := Ascending and (Before.SmallBlockTypeStates[I].InternalBlockSize >
      Before.SmallBlockTypeStates[I - 1].InternalBlockSize);
  Check(Ascending, 'the small block types in ascending size');
  C := 0;
  while (C < Integer(Before.SmallBlockTypeCount)) and (Before.SmallBlockTypeStates[C].UseableBlockSize < CSize) do
    Inc(C);
  Check(C < Integer(Before.SmallBlockTypeCount), 'a small block type for 40 bytes');
  CheckEquals(CBlocks, Int64(During.SmallBlockTypeStates[C].AllocatedBlockCount) -
    Int64(Before.SmallBlockTypeStates[C].AllocatedBlockCount), '100 blocks of 40 bytes are counted in their type');
  CheckEquals(0, Int64(After.SmallBlockTypeStates[C].AllocatedBlockCount) -
    Int64(Before.SmallBlockTypeStates[C].AllocatedBlockCount), 'and no longer once freed');
  Check(During.SmallBlockTypeStates[C].ReservedAddressSpace >= CBlocks * During.SmallBlockTypeStates[C].InternalBlockSize,
    'their type reserves the address space they take');
end;

{------------------------Invalid pointers and debug blocks------------------------}

procedure TestInvalidPointers(const AMode: string);
const
  CSizes: array[0..2] of Integer = (2000, 50000, 500000);
var
  P: PByte;
  I: Integer;
begin
  for I := Low(CSizes) to High(CSizes) do
  begin
    GetMem(P, CSizes[I]);
    FreeMem(P);
    Check(RaisesInvalidPointer(bcFreeMem, P), AMode + ': a second FreeMem of ' + IntToStr(CSizes[I]) +
      ' bytes raises EInvalidPointer');
    Check(RaisesInvalidPointer(bcReallocMem, P), AMode + ': a ReallocMem of a freed ' + IntToStr(CSizes[I]) +
      '-byte block raises EInvalidPointer');
  end;
  GetMem(P, 5000);
  Check(RaisesInvalidPointer(bcFreeMem, P + 64), AMode + ': FreeMem of a pointer inside a block raises EInvalidPointer');
  FreeMem(P);
end;

procedure TestDebugBlocks;
var
  P: PByte;
  Saved: Byte;
  Misaligned: Boolean;
begin
  Check(FastMM_EnterDebugMode and FastMM_DebugModeActive, 'FastMM_EnterDebugMode');
  P := FastMM_DebugGetMem(37);
  CheckEquals(37, FastMM_BlockCurrentUserBytes(P), 'a debug block knows the size asked for');
  Check(FastMM_BlockMaximumUserBytes(P) >= 37, 'and has at least that much room');
  Check(FastMM_ScanDebugBlocksForCorruption, 'intact debug blocks pass the scan (True)');
  Saved := P[37];
  P[37] := Saved xor $FF;
  Check(ScanRaises, 'a write past the end: the scan raises EInvalidPointer');
  P[37] := Saved;
  Check(not ScanRaises, 'repaired, the scan passes');
  Misaligned := False;
  try
    FastMM_DebugFreeMem(P + 1);
  except
    on EInvalidPointer do
      Misaligned := True;
  end;
  Check(Misaligned, 'FastMM_DebugFreeMem of a misaligned pointer raises EInvalidPointer');
  CheckEquals(0, FastMM_DebugFreeMem(P), 'FastMM_DebugFreeMem frees the block (0)');
  TestInvalidPointers('debug mode');
  Check(FastMM_ExitDebugMode and not FastMM_DebugModeActive, 'FastMM_ExitDebugMode');
end;

{------------------------The DLL's debug blocks through FastMM5's record------------------------}

function HeaderOf(P: Pointer): PFastMM_DebugBlockHeader;
begin
  Result := PFastMM_DebugBlockHeader(PByte(P) - SizeOf(TFastMM_DebugBlockHeader));
end;

function ChecksumsValid(H: PFastMM_DebugBlockHeader): Boolean;
begin
  Result := (H^.CalculateHeaderCheckSum = H^.HeaderCheckSum) and (H^.CalculateFooterCheckSum = H^.DebugFooterPtr^);
end;

function AllBytes(P: PByte; AFrom, ATo: Integer; AValue: Byte): Boolean;
var
  I: Integer;
begin
  Result := True;
  for I := AFrom to ATo - 1 do
    Result := Result and (P[I] = AValue);
end;

function LogText(const AName: string): string;
var
  Lines: TStringList;
begin
  Result := '';
  if not FileExists(AName) then
    Exit;
  Lines := TStringList.Create;
  Lines.LoadFromFile(AName);
  Result := Lines.Text;
  Lines.Free;
end;

procedure TestRealDebugBlocks;
var
  P, Q: PByte;
  H: PFastMM_DebugBlockHeader;
  Number: Cardinal;
  Entry: PNativeUInt;
begin
  {FastMM5: FastMM_DebugGetMem gives a debug block in normal mode too.}
  Check(not FastMM_DebugModeActive, 'normal mode');
  FastMM_CurrentAllocationGroup := 5;
  P := FastMM_DebugGetMem(37);
  H := HeaderOf(P);
  CheckEquals(37, H^.UserSize, 'UserSize: the size asked for');
  CheckEquals(32, H^.DebugBlockFlags, 'DebugBlockFlags: 32 while in use');
  CheckEquals(1, H^.DebugFeatureFlags, 'DebugFeatureFlags: checksums');
  CheckEquals(FastMM_GetDebugModeStackTraceEntryCount, H^.StackTraceEntryCount, 'StackTraceEntryCount: the depth set');
  CheckEquals(FastMM_LastAllocationNumber, H^.AllocationNumber, 'AllocationNumber: FastMM_LastAllocationNumber');
  CheckEquals(5, H^.AllocationGroup, 'AllocationGroup: FastMM_CurrentAllocationGroup');
  CheckEquals(ThisThreadId, H^.AllocatedByThread, 'AllocatedByThread: this thread');
  CheckEquals(0, H^.FreedByThread, 'FreedByThread: 0 while in use');
  Check(H^.PreviouslyUsedByClass = nil, 'PreviouslyUsedByClass: nil while in use');
  Check(H^.CalculateHeaderCheckSum = H^.HeaderCheckSum, 'the DLL''s header checksum is FastMM5''s');
  Check(H^.CalculateFooterCheckSum = H^.DebugFooterPtr^, 'the DLL''s footer checksum is FastMM5''s');
  Check(AllBytes(P, 0, 37, $90), 'the data is filled with $90');
  Entry := H^.DebugFooter_AllocationStackTracePtr;
  Check(Entry^ <> 0, 'the allocation stack trace is in the footer');
  Check(H^.DebugFooter_FreeStackTracePtr^ = 0, 'the free stack trace is empty while in use');
  Check(FastMM_BlockCurrentUserBytes(PByte(H)) = 0, 'the outer block is not the program''s');
  PPointer(P)^ := TShape; {a first pointer to remember, as an object's class}
  Number := H^.AllocationNumber;
  CheckEquals(0, FastMM_DebugFreeMem(P), 'FastMM_DebugFreeMem');
  CheckEquals(33, H^.DebugBlockFlags, 'DebugBlockFlags: 33 once freed');
  CheckEquals(3, H^.DebugFeatureFlags, 'DebugFeatureFlags: checksums and the fill pattern');
  CheckEquals(ThisThreadId, H^.FreedByThread, 'FreedByThread: this thread');
  Check(H^.PreviouslyUsedByClass = Pointer(TShape), 'PreviouslyUsedByClass: the first pointer before the free');
  Check(FastMM_DetectClassInstance(@H^.PreviouslyUsedByClass) = TShape, 'which FastMM_DetectClassInstance names');
  Check(ChecksumsValid(H), 'the freed block''s checksums are FastMM5''s');
  Check(H^.DebugFooter_FreeStackTracePtr^ <> 0, 'the free stack trace is in the footer');
  Check(AllBytes(P, SizeOf(Pointer), 37, $80), 'the data is filled with $80');
  CheckEquals(Number, H^.AllocationNumber, 'the freed header keeps its number');
  FastMM_CurrentAllocationGroup := 0;

  {Numbers count debug allocations in FastMM_LastAllocationNumber.}
  Number := FastMM_LastAllocationNumber;
  P := FastMM_DebugAllocMem(3000);
  CheckEquals(Number + 1, FastMM_LastAllocationNumber, 'one debug block, one number');
  CheckEquals(FastMM_LastAllocationNumber, HeaderOf(P)^.AllocationNumber, 'its number');
  Check(AllBytes(P, 0, 3000, 0), 'FastMM_DebugAllocMem: zeroed');
  {In place: the footer follows the new end.}
  Q := FastMM_DebugReallocMem(P, 1000);
  Check(Q = P, 'FastMM_DebugReallocMem to a smaller size stays in place');
  CheckEquals(1000, HeaderOf(Q)^.UserSize, 'with the new UserSize');
  Check(ChecksumsValid(HeaderOf(Q)), 'and valid checksums');
  Q := FastMM_DebugReallocMem(Q, 100000);
  Check((Q <> P) and (HeaderOf(Q)^.AllocationNumber = FastMM_LastAllocationNumber) and AllBytes(Q, 0, 1000, 0),
    'moved to a bigger block: the same number, the data');
  CheckEquals(33, HeaderOf(P)^.DebugBlockFlags, 'the old one freed');
  CheckEquals(0, FastMM_DebugFreeMem(Q), 'freed');
  {A normal block becomes a debug block.}
  GetMem(P, 40);
  FillChar(P^, 40, 7);
  Q := FastMM_DebugReallocMem(P, 20);
  Check((HeaderOf(Q)^.DebugBlockFlags = 32) and ChecksumsValid(HeaderOf(Q)) and AllBytes(Q, 0, 20, 7),
    'FastMM_DebugReallocMem of a normal block: a debug block with its data');
  CheckEquals(0, FastMM_DebugFreeMem(Q), 'freed');

  {The options apply to the blocks made from then on.}
  FastMM_SetDebugModeOptions([dmoNoBlockCheckSums]);
  P := FastMM_DebugGetMem(16);
  CheckEquals(0, HeaderOf(P)^.DebugFeatureFlags, 'dmoNoBlockCheckSums: no checksums');
  FastMM_DebugFreeMem(P);
  FastMM_SetDebugModeOptions([dmoNoBlockFillPatterns]);
  P := FastMM_DebugGetMem(16);
  FillChar(P^, 16, $11);
  FastMM_DebugFreeMem(P);
  Check(AllBytes(P, 0, 16, $11) and (HeaderOf(P)^.DebugFeatureFlags = 1),
    'dmoNoBlockFillPatterns: a freed block is not filled');
  FastMM_SetDebugModeOptions([dmoNeverFreeSmallBlockSpans, dmoNeverMergeFreeMediumBlocks]);
  Check(FastMM_ProcessAllPendingFrees, 'FastMM_ProcessAllPendingFrees');
end;

{------------------------The DLL's variables and events------------------------}

procedure ProgramStackTrace(APReturnAddresses: PNativeUInt; AMaxDepth, ASkipFrames: Cardinal);
var
  I: Cardinal;
begin
  for I := 0 to AMaxDepth - 1 do
  begin
    if I < 3 then
      APReturnAddresses^ := $1000 * (I + 1)
    else
      APReturnAddresses^ := 0;
    Inc(APReturnAddresses);
  end;
end;

function ProgramTraceText(APReturnAddresses: PNativeUInt; AMaxDepth: Cardinal;
  APBuffer, APBufferEnd: PWideChar): PWideChar;
const
  CText: UnicodeString = ' [program trace]';
var
  I: Integer;
begin
  Result := APBuffer;
  for I := 1 to Length(CText) do
    if Result < APBufferEnd then
    begin
      Result^ := CText[I];
      Inc(Result);
    end;
end;

function Raises204(P: Pointer): Boolean;
begin
  Result := False;
  try
    FreeMem(P);
  except
    on EInvalidPointer do
      Result := True;
  end;
end;

{The event log, named after the program: the library's and the static build's copies run side by
 side.}
function EventsFile: string;
begin
  Result := ChangeFileExt(ParamStr(0), '') + '_events.txt';
end;

procedure TestVariablesAndEvents;
var
  Log: string;
  P, LowBlock, HighBlock: Pointer;
  Shape: TShape;
  Raised: Boolean;
  State, Before: TFastMM_MemoryManagerState;
  Blocks: array[0..199] of Pointer;
  I, C: Integer;
begin
  Log := EventsFile;
  FastMM_SetEventLogFilename(PWideChar(UnicodeString(Log)));
  FastMM_DeleteEventLogFile;
  FastMM_MessageBoxEvents := [];

  {The stack trace routine FastMM_GetStackTrace points at takes the debug blocks' traces.}
  FastMM_GetStackTrace := ProgramStackTrace;
  P := FastMM_DebugGetMem(50);
  Check(HeaderOf(P)^.DebugFooter_AllocationStackTracePtr^ = $1000, 'the allocation trace comes from FastMM_GetStackTrace');
  FastMM_GetStackTrace := FastMM_NoOpGetStackTrace;

  {A double free: the template of FastMM5's event, its tokens, to the event log; EInvalidPointer.}
  FastMM_DebugBlockDoubleFree := 'DOUBLE FREE size={3} number={9} by={4} freedby={5} at:{6}'#13#10;
  FastMM_ConvertStackTraceToText := ProgramTraceText;
  FastMM_DebugFreeMem(P);
  Check(Raises204(P), 'FreeMem of a freed debug block raises EInvalidPointer');
  FastMM_ConvertStackTraceToText := FastMM_NoOpConvertStackTraceToText;
  Log := LogText(EventsFile);
  Check(Pos('DOUBLE FREE size=50 number=' + IntToStr(HeaderOf(P)^.AllocationNumber) + ' by=' +
    IntToStr(ThisThreadId) + ' freedby=' + IntToStr(ThisThreadId) + ' at: [program trace]', Log) > 0,
    'the event log has FastMM_DebugBlockDoubleFree filled in: ' + Copy(Log, 1, 300));

  {Routed as FastMM5's sets say: not to the log when the event is not in FastMM_LogToFileEvents.}
  FastMM_DeleteEventLogFile;
  Exclude(FastMM_LogToFileEvents, mmetDebugBlockDoubleFree);
  Check(Raises204(P), 'a third FreeMem raises as well');
  Check(not FileExists(EventsFile), 'but is not logged');
  Include(FastMM_LogToFileEvents, mmetDebugBlockDoubleFree);

  {A virtual method called on a freed object: FastMM5's event (method and class), then
  EInvalidPointer.}
  FastMM_VirtualMethodCallOnFreedObjectMessage := 'VIRTUAL CALL {17} on {8} ({3} bytes)'#13#10;
  Check(FastMM_EnterDebugMode, 'debug mode');
  Shape := TShape.Create;
  Shape.Free;
  Raised := False;
  try
    Shape.Free;
  except
    on EInvalidPointer do
      Raised := True;
  end;
  Check(Raised, 'a virtual call on a freed object raises EInvalidPointer');
  Log := LogText(EventsFile);
  Check(Pos('VIRTUAL CALL Destroy on TShape (' + IntToStr(TShape.InstanceSize) + ' bytes)', Log) > 0,
    'the event names the method and the class: ' + Copy(Log, 1, 300));

  {The quarantine of freed debug blocks is free memory (FastMM5 counts a freed block free).}
  FastMM_GetMemoryManagerState(Before);
  for I := 0 to High(Blocks) do
    GetMem(Blocks[I], 500);
  FastMM_GetMemoryManagerState(State);
  C := 0;
  while (C < Integer(State.SmallBlockTypeCount)) and (State.SmallBlockTypeStates[C].AllocatedBlockCount <
    Before.SmallBlockTypeStates[C].AllocatedBlockCount + NativeUInt(Length(Blocks))) do
    Inc(C);
  Check(C < Integer(State.SmallBlockTypeCount), 'the debug blocks'' outer blocks are counted in their size');
  for I := 0 to High(Blocks) do
    FreeMem(Blocks[I]);
  FastMM_GetMemoryManagerState(State);
  if C < Integer(State.SmallBlockTypeCount) then
    CheckEquals(Before.SmallBlockTypeStates[C].AllocatedBlockCount, State.SmallBlockTypeStates[C].AllocatedBlockCount,
      'freed, they are not allocated any more (they wait in the quarantine)');
  Check(PByte(Blocks[0])[100] = $80, 'they wait freed in the quarantine');
  Check(FastMM_ProcessAllPendingFrees, 'FastMM_ProcessAllPendingFrees empties it');
  Check(FastMM_ExitDebugMode, 'debug mode off');

  {FastMM_AllocateTopDown: memory comes from the top of the address space.}
  GetMem(LowBlock, 4 * 1024 * 1024);
  FastMM_AllocateTopDown := True;
  GetMem(HighBlock, 4 * 1024 * 1024);
  FastMM_AllocateTopDown := False;
  {Linux maps from the top down anyway: there the switch changes nothing to check.}
{$ifdef MSWINDOWS}
  Check(NativeUInt(HighBlock) > NativeUInt(LowBlock), 'FastMM_AllocateTopDown: a higher address');
{$endif}
  FreeMem(LowBlock);
  FreeMem(HighBlock);
  FastMM_MessageBoxEvents := FastMM_LogToFileEvents;
  FastMM_SetDefaultEventLogFilename;
end;

{------------------------Another memory manager installed------------------------}

var
  Underneath: TMemoryManager;
  OtherCalls: Integer;

function OtherGetMem(Size: PtrUInt): Pointer;
begin
  Inc(OtherCalls);
  Result := Underneath.GetMem(Size);
end;

procedure TestAnotherMemoryManager;
var
  Other: TMemoryManager;
  P: Pointer;
begin
  GetMemoryManager(Underneath);
  Other := Underneath;
  Other.GetMem := OtherGetMem;
  SetMemoryManager(Other);
  GetMem(P, 10);
  FreeMem(P);
  Check(OtherCalls > 0, 'another memory manager installed over FastMMC''s');
  Check(not FastMM_EnterDebugMode, 'FastMM_EnterDebugMode returns False under it');
  Check(not FastMM_DebugModeActive, 'and debug mode stays off');
  Check(not FastMM_BeginEraseFreedBlockContent and not FastMM_EraseFreedBlockContentActive,
    'FastMM_BeginEraseFreedBlockContent: False, the erase mode stays off');
  Check(not FastMM_BeginEraseAllocatedBlockContent and not FastMM_EraseAllocatedBlockContentActive,
    'FastMM_BeginEraseAllocatedBlockContent: False, the erase mode stays off');
  SetMemoryManager(Underneath);
  Check(FastMM_ExitDebugMode and FastMM_EndEraseFreedBlockContent and FastMM_EndEraseAllocatedBlockContent,
    'the counters moved anyway: Exit/End bring them back, nothing to switch');
  Check(not FastMM_DebugModeActive, 'debug mode still off');
  Check(FastMM_BeginEraseFreedBlockContent and FastMM_EraseFreedBlockContentActive, 'FastMMC''s own again: Begin works');
  Check(FastMM_EndEraseFreedBlockContent and not FastMM_EraseFreedBlockContentActive, 'and End');
end;

{------------------------Stack traces and the support library------------------------}

var
  ProgramTraceCalls: Integer;

procedure ProgramGetStackTrace(APReturnAddresses: PNativeUInt; AMaxDepth, ASkipFrames: Cardinal);
begin
  Inc(ProgramTraceCalls);
end;

procedure TestStackTraces;
var
  Entries: array[0..7] of NativeUInt;
  Text: array[0..255] of WideChar;
  TextEnd: PWideChar;
  I: Integer;
  Ok: Boolean;
begin
  Check(@FastMM_GetStackTrace = @FastMM_NoOpGetStackTrace, 'FastMM_GetStackTrace starts as the no-op routine');
  Check(@FastMM_ConvertStackTraceToText = @FastMM_NoOpConvertStackTraceToText,
    'FastMM_ConvertStackTraceToText starts as the no-op routine');
  FillChar(Entries, SizeOf(Entries), $FF);
  FastMM_NoOpGetStackTrace(@Entries[0], 5, 0);
  Ok := Entries[5] = High(NativeUInt);
  for I := 0 to 4 do
    Ok := Ok and (Entries[I] = 0);
  Check(Ok, 'FastMM_NoOpGetStackTrace: AMaxDepth zero entries, nothing more');
  Check(FastMM_NoOpConvertStackTraceToText(@Entries[0], 5, @Text[3], @Text[100]) = @Text[3],
    'FastMM_NoOpConvertStackTraceToText writes nothing');

  FastMM_DebugSupportLibraryName := 'no_such_support_library.dll';
  Check(not FastMM_LoadDebugSupportLibrary, 'a support library that is not there: False');
  Check(@FastMM_GetStackTrace = @FastMM_NoOpGetStackTrace, 'the handlers stay');
  Check(not FastMM_FreeDebugSupportLibrary, 'nothing to free: False');

{$ifdef MSWINDOWS}
  FastMM_DebugSupportLibraryName := 'fake_support.dll';
{$else}
  {dlopen searches no folder for a name without a slash but the library path.}
  FastMM_DebugSupportLibraryName := './libfake_support.so';
{$endif}
  Check(FastMM_LoadDebugSupportLibrary, 'the support library loads');
  Check(Assigned(DebugLibrary_GetRawStackTrace) and Assigned(DebugLibrary_GetFrameBasedStackTrace) and
    Assigned(DebugLibrary_LogStackTrace_Legacy), 'its three routines are found');
  Check(@FastMM_GetStackTrace = @DebugLibrary_GetRawStackTrace, 'FastMM_GetStackTrace is its GetRawStackTrace');
  FillChar(Entries, SizeOf(Entries), 0);
  FastMM_GetStackTrace(@Entries[0], 3, 0);
  Check((Entries[0] = $1000) and (Entries[2] = $1002) and (Entries[3] = 0), 'the library''s stack trace');
  TextEnd := FastMM_ConvertStackTraceToText(@Entries[0], 8, @Text[0], @Text[High(Text)]);
  TextEnd^ := #0;
  Check(UnicodeString(PWideChar(@Text[0])) = 'fake trace of 3', 'the library''s text of the stack trace: ' +
    UTF8Encode(UnicodeString(PWideChar(@Text[0]))));
  Check(FastMM_LoadDebugSupportLibrary, 'loading again: True (it is loaded)');
  Check(FastMM_FreeDebugSupportLibrary, 'FastMM_FreeDebugSupportLibrary');
  Check((@FastMM_GetStackTrace = @FastMM_NoOpGetStackTrace) and
    (@FastMM_ConvertStackTraceToText = @FastMM_NoOpConvertStackTraceToText), 'the no-op handlers are back');
  Check(not FastMM_FreeDebugSupportLibrary, 'freeing again: False');

  {A handler the program set is kept.}
  FastMM_GetStackTrace := ProgramGetStackTrace;
  Check(FastMM_LoadDebugSupportLibrary, 'the support library loads again');
  Check(@FastMM_GetStackTrace = @ProgramGetStackTrace, 'the program''s own FastMM_GetStackTrace is kept');
  Check(@FastMM_ConvertStackTraceToText <> @FastMM_NoOpConvertStackTraceToText, 'the no-op text handler is replaced');
  FastMM_GetStackTrace(@Entries[0], 3, 0);
  CheckEquals(1, ProgramTraceCalls, 'the program''s handler is called');
  Check(FastMM_FreeDebugSupportLibrary and (@FastMM_GetStackTrace = @ProgramGetStackTrace),
    'freeing the library keeps the program''s handler');
  FastMM_GetStackTrace := FastMM_NoOpGetStackTrace;
  FastMM_DebugSupportLibraryName := CFastMM_DefaultDebugSupportLibraryName;
end;

{------------------------Settings------------------------}

procedure TestSettings;
var
  Strategy: TFastMM_MemoryManagerOptimizationStrategy;
  Alignment: TFastMM_MinimumAddressAlignment;
  P: array[0..99] of Pointer;
  I: Integer;
  Ok: Boolean;
  Mask: NativeUInt;
begin
  Check(FastMM_GetCurrentOptimizationStrategy = mmosBalanced, 'the optimization strategy starts balanced');
  for Strategy := Low(Strategy) to High(Strategy) do
  begin
    FastMM_SetOptimizationStrategy(Strategy);
    Check(FastMM_GetCurrentOptimizationStrategy = Strategy, 'FastMM_SetOptimizationStrategy ' + IntToStr(Ord(Strategy)));
  end;
  FastMM_SetOptimizationStrategy(mmosBalanced);

  Check(FastMM_GetDebugModeOptions = [dmoNeverFreeSmallBlockSpans, dmoNeverMergeFreeMediumBlocks],
    'the debug mode options start as FastMM5''s');
  FastMM_SetDebugModeOptions([dmoNoBlockFillPatterns]);
  Check(FastMM_GetDebugModeOptions = [dmoNoBlockFillPatterns], 'FastMM_SetDebugModeOptions');
  FastMM_SetDebugModeOptions([dmoNeverFreeSmallBlockSpans, dmoNeverMergeFreeMediumBlocks]);

  Check((SizeOf(Pointer) = 4) or (FastMM_GetCurrentMinimumAddressAlignment >= maa16Bytes),
    'Win64: at least 16-byte alignment');
  for Alignment := Low(Alignment) to High(Alignment) do
  begin
    FastMM_EnterMinimumAddressAlignment(Alignment);
    Check(FastMM_GetCurrentMinimumAddressAlignment >= Alignment, 'at least the alignment requested');
    Mask := (NativeUInt(8) shl Ord(FastMM_GetCurrentMinimumAddressAlignment)) - 1;
    Ok := True;
    for I := 0 to High(P) do
    begin
      GetMem(P[I], 1 + I * 37);
      Ok := Ok and (NativeUInt(P[I]) and Mask = 0);
    end;
    for I := 0 to High(P) do
      FreeMem(P[I]);
    Check(Ok, 'every block honours the alignment in effect');
    FastMM_ExitMinimumAddressAlignment(Alignment);
  end;
end;

procedure TestStateLogTemplate;
var
  Big: Pointer;
  Name: string;
  Lines: TStringList;
  Text: string;
  KB: Integer;
  Saved: PWideChar;
begin
  GetMem(Big, 2 * 1024 * 1024);
  Name := ChangeFileExt(ParamStr(0), '') + '_state.txt';
  Saved := FastMM_LogStateToFileTemplate;
  FastMM_LogStateToFileTemplate := 'State on {1} at {2}: [{18}] KB allocated, [{19}] KB overhead, [{20}] percent'#13#10;
  Check(FastMM_LogStateToFile(PWideChar(UnicodeString(Name)), 'the end'), 'FastMM_LogStateToFile');
  FastMM_LogStateToFileTemplate := Saved;
  FreeMem(Big);
  Lines := TStringList.Create;
  Lines.LoadFromFile(Name);
  Text := Lines.Text;
  Lines.Free;
  DeleteFile(Name);
  Check(Pos('State on ' + FormatDateTime('yyyy-mm-dd', Date) + ' at ', Text) = 1, 'the template with the date: ' + Copy(Text, 1, 80));
  KB := StrToIntDef(Copy(Text, Pos('[', Text) + 1, Pos(']', Text) - Pos('[', Text) - 1), -1);
  Check(KB >= 2048, 'token 18: the kilobytes allocated include the 2 MB block (' + IntToStr(KB) + ')');
  Check(Pos('] percent', Text) > 0, 'token 20');
  Check(Pos('the end', Text) > 0, 'the additional details');
end;

{------------------------Names that wait for the DLL's block walk------------------------}

var
  Walked: Integer;

procedure CountBlock(const ABlockInfo: TFastMM_WalkAllocatedBlocks_BlockInfo);
begin
  Inc(Walked);
end;

procedure NameTheRest;
begin
  {FastMM5's walk (test_walk.pas tests it), allocation groups, contention counters and top-down
  switch: compiled here.}
  Check(FastMM_WalkBlocks(CountBlock, [btSmallBlock, btMediumBlock, btLargeBlock], True, nil) and (Walked > 0),
    'FastMM_WalkBlocks finds the blocks in use');
  FastMM_CurrentAllocationGroup := 0;
  FastMM_DebugBreakAllocationNumber := 0;
  FastMM_AllocateTopDown := False;
  FastMM_DebugMode_ScanForCorruptionBeforeEveryOperation := False;
  WriteLn('walked ', Walked, ' blocks; last allocation number ', FastMM_LastAllocationNumber,
    '; thread contention ', FastMM_SmallBlockThreadContentionCount, '/', FastMM_MediumBlockThreadContentionCount,
    '/', FastMM_LargeBlockThreadContentionCount);
end;

begin
  Check(FastMM_GetInstallationState = mmisInstalled, 'installed');
  Check(CFastMM_Version >= 500, 'CFastMM_Version is FastMM5''s');
  TestDebugBlockHeader;
  TestDetectClassInstance;
  TestDetectStringData;
  TestMemoryMap;
  TestMemoryManagerState;
  TestInvalidPointers('normal mode');
  TestDebugBlocks;
  TestRealDebugBlocks;
  TestVariablesAndEvents;
  TestAnotherMemoryManager;
  TestStackTraces;
  TestSettings;
  TestStateLogTemplate;
  NameTheRest;
  WriteLn('test_fastmm5 (', {$ifdef MSWINDOWS}'Win'{$else}'Linux'{$endif}, SizeOf(Pointer) * 8, '): ', Checks, ' checks, ',
    Failures, ' failed');
  if Failures <> 0 then
    Halt(1);
end.
