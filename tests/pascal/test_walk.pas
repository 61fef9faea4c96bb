{ SPDX-License-Identifier: MIT }
{ The routines of FastMM5 that go through the blocks, and the ones that tune the manager, as
  FastMM5 documents them:
    - FastMM_WalkBlocks: every block of the program's found with its type, address and sizes,
      AUserData passed through, the type set ([] = all), free blocks only when asked for, the
      allocation group range, a callback that allocates, an exception from the callback raised
      again by FastMM_WalkBlocks;
    - FastMM_GetMemoryManagerState from the walk, against the DLL's own counters;
    - FastMM_GetMemoryMap: medium and large blocks in csAllocated chunks;
    - FastMM_LogStateToFile: the usage per class (FastMM_LogStateToFileTemplate_UsageDetail), its
      two sort orders and the allocation group ranges;
    - FastMM_EnterMinimumAddressAlignment / Exit for 32 and 64 bytes: every block aligned, objects
      and strings too, requests nesting, the coarsest in effect;
    - FastMM_SetOptimizationStrategy: the size of the medium spans mapped from then on;
    - FastMM_WriteUsageReport (fastmm-c's, beyond FastMM5). }
program test_walk;

{$H+}

uses
  FastMMC, SysUtils, Classes, FmmTest;

type
  TWalkTestObject = class
    Data: array[0..9] of NativeInt;
  end;
  ETestWalk = class(Exception);

{------------------------FastMM_WalkBlocks------------------------}

const
  CHeld = 12;

type
  TFound = record
    Blocks: array[0..CHeld - 1] of Pointer;
    Types: array[0..CHeld - 1] of TFastMM_WalkAllocatedBlocksBlockType;
    Seen: array[0..CHeld - 1] of Integer;
    SeenFree: array[0..CHeld - 1] of Integer;
    Wrong: Integer;
    Count: array[TFastMM_WalkAllocatedBlocksBlockType] of Integer;
    FreeCount: Integer;
    BigSpan, SmallSpanSlots: Boolean;
    Allocate: Boolean;
  end;
  PFound = ^TFound;

procedure FindBlocks(const ABlockInfo: TFastMM_WalkAllocatedBlocks_BlockInfo);
var
  Found: PFound;
  I: Integer;
  S: string;
begin
  Found := ABlockInfo.UserData;
  Inc(Found^.Count[ABlockInfo.BlockType]);
  if ABlockInfo.BlockIsFree then
    Inc(Found^.FreeCount);
  if Found^.Allocate then
  begin
    {No lock of the memory manager is held during the callback.}
    S := IntToStr(NativeUInt(ABlockInfo.BlockAddress));
    if S = '' then
      Inc(Found^.Wrong);
  end;
  case ABlockInfo.BlockType of
    btMediumBlockSpan:
      Found^.BigSpan := Found^.BigSpan or (ABlockInfo.BlockSize >= 1024 * 1024);
    btSmallBlockSpan:
      Found^.SmallSpanSlots := Found^.SmallSpanSlots or (ABlockInfo.SmallBlockSpanBlockSize > 0);
  end;
  for I := 0 to CHeld - 1 do
    if Found^.Blocks[I] = ABlockInfo.BlockAddress then
    begin
      if ABlockInfo.BlockIsFree then
        Inc(Found^.SeenFree[I])
      else
      begin
        Inc(Found^.Seen[I]);
        if (ABlockInfo.BlockType <> Found^.Types[I]) or
          (ABlockInfo.UsableSize <> FastMM_BlockMaximumUserBytes(ABlockInfo.BlockAddress)) or
          (ABlockInfo.BlockSize < ABlockInfo.UsableSize) or (ABlockInfo.DebugInformation <> nil) then
          Inc(Found^.Wrong);
      end;
    end;
end;

procedure RaiseInCallback(const ABlockInfo: TFastMM_WalkAllocatedBlocks_BlockInfo);
begin
  raise ETestWalk.Create('from the callback');
end;

procedure ResetFound(var AFound: TFound);
var
  I: Integer;
  T: TFastMM_WalkAllocatedBlocksBlockType;
begin
  for I := 0 to CHeld - 1 do
  begin
    AFound.Seen[I] := 0;
    AFound.SeenFree[I] := 0;
  end;
  for T := Low(T) to High(T) do
    AFound.Count[T] := 0;
  AFound.Wrong := 0;
  AFound.FreeCount := 0;
  AFound.BigSpan := False;
  AFound.SmallSpanSlots := False;
end;

procedure TestWalkBlocks;
const
  CSizes: array[0..CHeld - 1] of NativeInt = (1, 40, 200, 1000, 2500, 3000, 20000, 400000, 600000, 3000000, 77, 5000);
var
  Found: TFound;
  I: Integer;
  Raised: Boolean;
  Freed: Pointer;
begin
  FillChar(Found, SizeOf(Found), 0);
  for I := 0 to CHeld - 1 do
  begin
    GetMem(Found.Blocks[I], CSizes[I]);
    if CSizes[I] <= 2556 then
      Found.Types[I] := btSmallBlock
    else if CSizes[I] <= 524272 then
      Found.Types[I] := btMediumBlock
    else
      Found.Types[I] := btLargeBlock;
  end;
  Check(FastMM_WalkBlocks(FindBlocks, [], True, @Found), 'FastMM_WalkBlocks walks every arena');
  for I := 0 to CHeld - 1 do
    CheckEquals(1, Found.Seen[I], 'the ' + IntToStr(CSizes[I]) + '-byte block is reported once');
  CheckEquals(0, Found.Wrong, 'each with its type, its usable size and its block size');
  CheckEquals(0, Found.FreeCount, 'used blocks only: nothing free');
  Check(Found.Count[btMediumBlockSpan] > 0, '[]: the medium spans too');
  Check(Found.Count[btSmallBlockSpan] > 0, '[]: the small spans too');
  Check(Found.BigSpan, 'a medium span of at least 1 MB');
  Check(Found.SmallSpanSlots, 'a small span with its block size');

  {A freed block (in the thread's cache) is free: reported only with AWalkUsedBlocksOnly False.}
  Freed := Found.Blocks[1];
  FreeMem(Freed);
  ResetFound(Found);
  FastMM_WalkBlocks(FindBlocks, [btSmallBlock], False, @Found);
  CheckEquals(0, Found.Seen[1], 'a freed block is not in use');
  CheckEquals(1, Found.SeenFree[1], 'a freed block is reported free');
  CheckEquals(Found.Count[btSmallBlock], Found.Count[btSmallBlock] + Found.Count[btLargeBlock] +
    Found.Count[btMediumBlock] + Found.Count[btMediumBlockSpan] + Found.Count[btSmallBlockSpan],
    '[btSmallBlock]: small blocks only');
  ResetFound(Found);
  FastMM_WalkBlocks(FindBlocks, [btSmallBlock], True, @Found);
  CheckEquals(0, Found.SeenFree[1] + Found.Seen[1], 'and not at all when only used ones are asked for');
  GetMem(Found.Blocks[1], 40);

  {Allocation groups: a block that is not a debug block is in group 0; spans are in none.}
  ResetFound(Found);
  Check(FastMM_WalkBlocks(FindBlocks, [], False, @Found, 1000, 1, 10), 'a walk of groups 1..10');
  CheckEquals(0, Found.Count[btSmallBlock] + Found.Count[btMediumBlock] + Found.Count[btLargeBlock] +
    Found.Count[btSmallBlockSpan] + Found.Count[btMediumBlockSpan], 'finds nothing outside debug mode');

  {The callback may allocate.}
  ResetFound(Found);
  Found.Allocate := True;
  Check(FastMM_WalkBlocks(FindBlocks, [btSmallBlock, btMediumBlock, btLargeBlock], True, @Found),
    'a callback that allocates');
  for I := 0 to CHeld - 1 do
    CheckEquals(1, Found.Seen[I], 'and every block still reported once');
  Found.Allocate := False;

  {An exception from the callback ends the walk and comes out of FastMM_WalkBlocks.}
  Raised := False;
  try
    FastMM_WalkBlocks(RaiseInCallback);
  except
    on E: ETestWalk do
      Raised := E.Message = 'from the callback';
  end;
  Check(Raised, 'the callback''s exception is raised by FastMM_WalkBlocks');
  CheckEquals(0, FastMMC_CheckHeap, 'and the heap is consistent');
  Check(not FastMM_WalkBlocks(nil), 'no callback: False');

  for I := 0 to CHeld - 1 do
    FreeMem(Found.Blocks[I]);
end;

{------------------------The state and the map------------------------}

procedure TestStateAndMap;
var
  State: TFastMM_MemoryManagerState;
  S: TFastMMC_State;
  Medium, Large: Pointer;
  Map: TMemoryMap;
  I: Integer;
  SmallCount: NativeUInt;
begin
  GetMem(Medium, 100000);
  GetMem(Large, 2000000);
  FastMM_ProcessAllPendingFrees;
  FastMM_GetMemoryManagerState(State);
  FastMMC_GetState(S);
  CheckEquals(S.Medium.BlocksInUse, State.AllocatedMediumBlockCount, 'medium blocks counted by the walk');
  CheckEquals(S.Medium.BytesInUse, State.TotalAllocatedMediumBlockSize, 'their usable bytes');
  CheckEquals(S.Large.BlocksInUse, State.AllocatedLargeBlockCount, 'large blocks counted by the walk');
  CheckEquals(S.Large.BytesInUse, State.TotalAllocatedLargeBlockSize, 'their usable bytes');
  CheckEquals(S.Large.BytesReserved, State.ReservedLargeBlockAddressSpace, 'their mappings');
  CheckEquals(S.Medium.BytesReserved, State.ReservedMediumBlockAddressSpace, 'the medium spans less the small ones');
  SmallCount := 0;
  for I := 0 to State.SmallBlockTypeCount - 1 do
    Inc(SmallCount, State.SmallBlockTypeStates[I].AllocatedBlockCount);
  CheckEquals(S.Small.BlocksInUse, SmallCount, 'small blocks counted by the walk, per class');
  FastMM_GetMemoryMap(Map);
  if NativeUInt(Medium) shr 16 <= High(Map) then
    Check(Map[NativeUInt(Medium) shr 16] = csAllocated, 'a medium block''s chunk is csAllocated');
  if NativeUInt(Large) shr 16 <= High(Map) then
    Check(Map[(NativeUInt(Large) + 1999999) shr 16] = csAllocated, 'the last chunk of a large block is csAllocated');
  FreeMem(Medium);
  FreeMem(Large);
end;

{------------------------The state log------------------------}

function LogText(const AName: string): string;
var
  Lines: TStringList;
begin
  Lines := TStringList.Create;
  Lines.LoadFromFile(AName);
  Result := Lines.Text;
  Lines.Free;
  DeleteFile(AName);
end;

{The numbers of the detail line of AClassName: total bytes and count, -1 when there is none.}
procedure DetailOf(const AText, AClassName: string; out ABytes, ACount: Int64);
var
  Lines: TStringList;
  I, P: Integer;
  L: string;
begin
  ABytes := -1;
  ACount := -1;
  Lines := TStringList.Create;
  Lines.Text := AText;
  for I := 0 to Lines.Count - 1 do
  begin
    L := Lines[I];
    P := Pos(' bytes: ' + AClassName + ' x ', L);
    if P > 0 then
    begin
      ABytes := StrToInt64Def(Copy(L, 1, P - 1), -2);
      L := Copy(L, P + Length(' bytes: ' + AClassName + ' x '), MaxInt);
      ACount := StrToInt64Def(Copy(L, 1, Pos(' ', L) - 1), -2);
    end;
  end;
  Lines.Free;
end;

procedure TestStateLog;
var
  Objects: array[0..49] of TWalkTestObject;
  Name, Text: string;
  I: Integer;
  Bytes, Count: Int64;
  Lines: TStringList;
  Ordered: Boolean;
  Previous: Int64;
  PreviousName, Current: string;
begin
  for I := 0 to High(Objects) do
    Objects[I] := TWalkTestObject.Create;
  {Named after the program: the library's and the static build's copies run side by side.}
  Name := ChangeFileExt(ParamStr(0), '') + '_state.txt';
  Check(FastMM_LogStateToFile(PWideChar(UnicodeString(Name))), 'FastMM_LogStateToFile');
  Text := LogText(Name);
  DetailOf(Text, 'TWalkTestObject', Bytes, Count);
  CheckEquals(50, Count, 'the state log counts the 50 objects of their class');
  CheckEquals(50 * FastMM_BlockMaximumUserBytes(Objects[0]), Bytes, 'and their bytes');
  Check(Pos(' x ', Text) > 0, 'FastMM_LogStateToFileTemplate_UsageDetail lines');
  {soDescendingTotalMemoryUsage: the totals never grow down the list.}
  Lines := TStringList.Create;
  Lines.Text := Copy(Text, Pos('Usage Detail:', Text), MaxInt);
  Ordered := True;
  Previous := High(Int64);
  for I := 1 to Lines.Count - 1 do
    if Pos(' bytes: ', Lines[I]) > 0 then
    begin
      Bytes := StrToInt64Def(Copy(Lines[I], 1, Pos(' bytes: ', Lines[I]) - 1), -1);
      Ordered := Ordered and (Bytes <= Previous);
      Previous := Bytes;
    end;
  Check(Ordered, 'sorted by descending total');
  {soAlphabetical.}
  Check(FastMM_LogStateToFile(PWideChar(UnicodeString(Name)), nil, True, soAlphabetical), 'alphabetical');
  Lines.Text := Copy(LogText(Name), Pos('Usage Detail:', Text), MaxInt);
  Ordered := True;
  PreviousName := '';
  for I := 1 to Lines.Count - 1 do
    if Pos(' bytes: ', Lines[I]) > 0 then
    begin
      Current := Copy(Lines[I], Pos(' bytes: ', Lines[I]) + 8, MaxInt);
      Current := Copy(Current, 1, Pos(' x ', Current) - 1);
      Ordered := Ordered and (CompareStr(PreviousName, Current) <= 0);
      PreviousName := Current;
    end;
  Check(Ordered, 'sorted by name');
  Lines.Free;
  {Groups 1 and up: no block outside debug mode is in one.}
  Check(FastMM_LogStateToFile(PWideChar(UnicodeString(Name)), nil, True, soDescendingTotalMemoryUsage, 50, 1,
    $ffffffff), 'groups 1 and up');
  DetailOf(LogText(Name), 'TWalkTestObject', Bytes, Count);
  CheckEquals(-1, Count, 'no detail line for groups without blocks');
  {Every group, less group 0: nothing left.}
  Check(FastMM_LogStateToFile(PWideChar(UnicodeString(Name)), nil, True, soDescendingTotalMemoryUsage, 50, 0,
    $ffffffff, 0, 0), 'a difference of groups');
  DetailOf(LogText(Name), 'TWalkTestObject', Bytes, Count);
  CheckEquals(-1, Count, 'the subtracted groups take their blocks off');
  for I := 0 to High(Objects) do
    Objects[I].Free;
end;

{------------------------Alignment------------------------}

const
  CStringHeader = {$ifdef CPU64}24{$else}12{$endif};

function AllAligned(AMask: NativeUInt): Boolean;
var
  P: array[0..199] of Pointer;
  O: TObject;
  S: string;
  I: Integer;
begin
  Result := True;
  for I := 0 to High(P) do
  begin
    GetMem(P[I], 1 + I * 29);
    Result := Result and (NativeUInt(P[I]) and AMask = 0);
  end;
  for I := 0 to 4 do
  begin
    ReallocMem(P[I], 100000 + I * 300000);
    Result := Result and (NativeUInt(P[I]) and AMask = 0);
  end;
  for I := 0 to High(P) do
    FreeMem(P[I]);
  O := TWalkTestObject.Create;
  Result := Result and (NativeUInt(O) and AMask = 0);
  O.Free;
  S := StringOfChar('x', 33);
  {The string's block starts at its header (Free Pascal's TAnsiRec).}
  Result := Result and ((NativeUInt(Pointer(S)) - CStringHeader) and AMask = 0);
end;

procedure TestAlignment;
var
  Blocks: array[0..63] of Pointer;
  SomeNot32: Boolean;
  I: Integer;
begin
  Check(FastMM_GetCurrentMinimumAddressAlignment = maa16Bytes, 'every block 16-byte aligned to begin with');
  FastMM_EnterMinimumAddressAlignment(maa32Bytes);
  Check(FastMM_GetCurrentMinimumAddressAlignment = maa32Bytes, 'maa32Bytes in effect');
  Check(AllAligned(31), 'every block, object and string 32-byte aligned');
  FastMM_EnterMinimumAddressAlignment(maa64Bytes);
  Check(FastMM_GetCurrentMinimumAddressAlignment = maa64Bytes, 'the coarsest request in effect');
  Check(AllAligned(63), 'every block, object and string 64-byte aligned');
  FastMM_EnterMinimumAddressAlignment(maa16Bytes);
  Check(FastMM_GetCurrentMinimumAddressAlignment = maa64Bytes, 'a finer request changes nothing');
  FastMM_ExitMinimumAddressAlignment(maa16Bytes);
  FastMM_ExitMinimumAddressAlignment(maa64Bytes);
  Check(FastMM_GetCurrentMinimumAddressAlignment = maa32Bytes, 'back to the 32-byte request');
  Check(AllAligned(31), 'still 32-byte aligned');
  FastMM_ExitMinimumAddressAlignment(maa32Bytes);
  Check(FastMM_GetCurrentMinimumAddressAlignment = maa16Bytes, 'no request left');
  SomeNot32 := False;
  for I := 0 to High(Blocks) do
  begin
    GetMem(Blocks[I], 40);
    SomeNot32 := SomeNot32 or (NativeUInt(Blocks[I]) and 31 <> 0);
  end;
  for I := 0 to High(Blocks) do
    FreeMem(Blocks[I]);
  Check(SomeNot32, 'blocks of 40 bytes in 48-byte slots again (not all 32-byte aligned)');
end;

{------------------------Optimization strategy------------------------}

var
  KnownSpans: array[0..1023] of Pointer;
  KnownCount: Integer;
  NewSpanSize: NativeInt;

procedure FindNewSpan(const ABlockInfo: TFastMM_WalkAllocatedBlocks_BlockInfo);
var
  I: Integer;
begin
  for I := 0 to KnownCount - 1 do
    if KnownSpans[I] = ABlockInfo.BlockAddress then
      Exit;
  if KnownCount <= High(KnownSpans) then
  begin
    KnownSpans[KnownCount] := ABlockInfo.BlockAddress;
    Inc(KnownCount);
  end;
  NewSpanSize := ABlockInfo.BlockSize;
end;

{The size of the next medium span: the largest medium blocks until a new span appears.}
function NextSpanSize(var AHeld: array of Pointer; var ACount: Integer): NativeInt;
begin
  FastMM_WalkBlocks(FindNewSpan, [btMediumBlockSpan], False);
  NewSpanSize := 0;
  while (NewSpanSize = 0) and (ACount <= High(AHeld)) do
  begin
    GetMem(AHeld[ACount], 500000);
    Inc(ACount);
    FastMM_WalkBlocks(FindNewSpan, [btMediumBlockSpan], False);
  end;
  Result := NewSpanSize;
end;

procedure TestStrategy;
var
  Held: array[0..99] of Pointer;
  Count, I: Integer;
begin
  Count := 0;
  FastMMC_ReleaseFreeMemory;
  { A span is mapped 64 KB larger than its strategy's size: its first 64 KB hold its header
    alone, its blocks the strategy's size after them. }
  FastMM_SetOptimizationStrategy(mmosOptimizeForSpeed);
  CheckEquals(4 * 1024 * 1024 + 65536, NextSpanSize(Held, Count), 'mmosOptimizeForSpeed: 4 MB medium spans');
  FastMM_SetOptimizationStrategy(mmosOptimizeForLowMemoryUsage);
  CheckEquals(1024 * 1024 + 65536, NextSpanSize(Held, Count), 'mmosOptimizeForLowMemoryUsage: 1 MB medium spans');
  FastMM_SetOptimizationStrategy(mmosBalanced);
  CheckEquals(2 * 1024 * 1024 + 65536, NextSpanSize(Held, Count), 'mmosBalanced: 2 MB medium spans');
  Check(FastMM_GetCurrentOptimizationStrategy = mmosBalanced, 'FastMM_GetCurrentOptimizationStrategy');
  for I := 0 to Count - 1 do
    FreeMem(Held[I]);
end;

{------------------------The usage report------------------------}

procedure TestUsageReport;
var
  Name, Text: string;
  Lines: TStringList;
  Big: Pointer;
begin
  GetMem(Big, 1500000);
  Name := ChangeFileExt(ParamStr(0), '') + '_usage.html';
  Check(FastMM_WriteUsageReport(PWideChar(UnicodeString(Name))), 'FastMM_WriteUsageReport');
  FreeMem(Big);
  Lines := TStringList.Create;
  Lines.LoadFromFile(Name);
  Text := Lines.Text;
  Lines.Free;
  DeleteFile(Name);
  Check(Pos('<!DOCTYPE html>', Text) = 1, 'an HTML page');
  Check(Pos('<svg', Text) > 0, 'with the address-space map');
  Check(Pos('<table id="classes">', Text) > 0, 'the size classes');
  Check(Pos('<table id="largest">', Text) > 0, 'the largest blocks');
  Check(Pos('<script', Text) = 0, 'and nothing to run');
  Check(Pos('test_walk', Text) > 0, 'it names the program');
  Check(FastMM_WriteUsageReport(nil), 'the default name');
  Name := ChangeFileExt(ParamStr(0), '') + '_MemoryManager_UsageReport.html';
  Check(FileExists(Name), 'beside the program: ' + Name);
  DeleteFile(Name);
  Check(not FastMM_WriteUsageReport({$ifdef MSWINDOWS}'no-such-folder\x\report.html'{$else}'no-such-folder/x/report.html'{$endif}),
    'a path that cannot be written: False');
end;

begin
  Check(FastMM_GetInstallationState = mmisInstalled, 'installed');
  TestWalkBlocks;
  TestStateAndMap;
  TestStateLog;
  TestAlignment;
  TestStrategy;
  TestUsageReport;
  ExitCode := Finish('test_walk');
end.
