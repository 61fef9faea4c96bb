{ SPDX-License-Identifier: MIT }
{ After FastMMC is installed, every allocation of the RTL goes through the DLL: AnsiString and
  UnicodeString building and copying, objects, TStringList sorting, dynamic arrays growing by
  SetLength and exceptions, on the main thread and on 4 TThreads at once.

  The proof is in the DLL's counters (fastmm_get_state): while a workload holds N blocks, the
  DLL holds at least N more live blocks than before; objects, exceptions and array blocks are
  the DLL's own (fastmm_owns_block); Free Pascal's own heap (the previous manager) does not
  grow; and when the workload lets go, the DLL's count comes back. }
program test_rtl;

uses
  FastMMC, SysUtils, Classes, FmmTest;

const
  N = 3000;         {items of each kind per workload}
  Exceptions = 300; {exceptions raised and caught per workload}
  ThreadCount = 4;
  {Blocks the RTL may keep between two counts (buffers it caches): the checks allow this many.}
  Slack = 16;

type
  TItem = class
  public
    Name: string;
    Value: Integer;
    Link: TItem;
    constructor Create(const AName: string; AValue: Integer);
  end;

  {What one workload holds while the counters are read.}
  THeld = record
    Ansi: array of AnsiString;
    Wide: array of UnicodeString;
    Items: TList;
    List: TStringList;
    Ints: array of Integer;
    Strs: array of string;
  end;

constructor TItem.Create(const AName: string; AValue: Integer);
begin
  inherited Create;
  Name := AName;
  Value := AValue;
end;

{The block a dynamic array's data pointer belongs to: Free Pascal puts a reference count and
the high bound (two pointer-sized fields) in front of the data.}
function DynArrayBlock(P: Pointer): Pointer;
begin
  Result := PByte(P) - 2 * SizeOf(PtrInt);
end;

procedure Build(var H: THeld; const Tag: string);
var
  I: Integer;
  S: AnsiString;
  W: UnicodeString;
begin
  {AnsiStrings: built piece by piece, then copied and made unique.}
  SetLength(H.Ansi, N);
  for I := 0 to N - 1 do
  begin
    S := AnsiString(Tag) + 'ansi-' + AnsiString(IntToStr(I));
    S := S + StringOfChar(AnsiChar('a'), I mod 40);
    H.Ansi[I] := S;
    UniqueString(H.Ansi[I]);
  end;
  {UnicodeStrings, the same way.}
  SetLength(H.Wide, N);
  for I := 0 to N - 1 do
  begin
    W := UnicodeString(Tag) + 'wide-' + UnicodeString(IntToStr(I));
    W := W + UnicodeString(StringOfChar('w', I mod 40));
    H.Wide[I] := W;
    UniqueString(H.Wide[I]);
  end;
  {Objects, with strings of their own.}
  H.Items := TList.Create;
  for I := 0 to N - 1 do
    H.Items.Add(TItem.Create(Tag + 'item' + IntToStr(N - I), I));
  {A sorted TStringList.}
  H.List := TStringList.Create;
  for I := 0 to N - 1 do
    H.List.Add(Tag + IntToStr((I * 7919) mod N));
  H.List.Sort;
  {Dynamic arrays grown one element at a time.}
  H.Ints := nil;
  for I := 0 to N - 1 do
  begin
    SetLength(H.Ints, Length(H.Ints) + 1);
    H.Ints[High(H.Ints)] := I;
  end;
  H.Strs := nil;
  for I := 0 to N div 4 - 1 do
  begin
    SetLength(H.Strs, Length(H.Strs) + 1);
    H.Strs[High(H.Strs)] := IntToStr(I) + Tag;
  end;
end;

{Checks what a workload holds: contents, and that its objects are the DLL's blocks. Returns the
number of failed items (the caller decides how to report it: it may run on a thread).}
function Verify(const H: THeld; const Tag: string): Integer;
var
  I: Integer;
  Prev: string;
begin
  Result := 0;
  for I := 0 to N - 1 do
  begin
    if H.Ansi[I] <> AnsiString(Tag) + 'ansi-' + AnsiString(IntToStr(I)) + StringOfChar(AnsiChar('a'), I mod 40) then
      Inc(Result);
    if H.Wide[I] <> UnicodeString(Tag) + 'wide-' + UnicodeString(IntToStr(I)) + UnicodeString(StringOfChar('w', I mod 40)) then
      Inc(Result);
    if not FastMMC_OwnsBlock(H.Items[I]) or (TItem(H.Items[I]).Value <> I) then
      Inc(Result);
    if H.Ints[I] <> I then
      Inc(Result);
  end;
  Prev := '';
  for I := 0 to H.List.Count - 1 do
  begin
    if H.List[I] < Prev then
      Inc(Result);
    Prev := H.List[I];
  end;
  if H.List.Count <> N then
    Inc(Result);
  if not FastMMC_OwnsBlock(H.List) or not FastMMC_OwnsBlock(H.Items) then
    Inc(Result);
  if not FastMMC_OwnsBlock(DynArrayBlock(Pointer(H.Ints))) or not FastMMC_OwnsBlock(DynArrayBlock(Pointer(H.Strs))) then
    Inc(Result);
  for I := 0 to High(H.Strs) do
    if H.Strs[I] <> IntToStr(I) + Tag then
      Inc(Result);
end;

procedure Release(var H: THeld);
var
  I: Integer;
begin
  H.Ansi := nil;
  H.Wide := nil;
  for I := 0 to H.Items.Count - 1 do
    TItem(H.Items[I]).Free;
  FreeAndNil(H.Items);
  FreeAndNil(H.List);
  H.Ints := nil;
  H.Strs := nil;
end;

{Blocks a workload holds at least: every AnsiString and UnicodeString, every item object and its
name, the list's strings, and a handful of arrays and lists.}
function MinimumBlocks: NativeUInt;
begin
  Result := 2 * N + 2 * N + N + N div 4;
end;

{Raises and catches exceptions; returns how many exception objects were not the DLL's.}
function RaiseAndCatch(const Tag: string): Integer;
var
  I: Integer;
begin
  Result := 0;
  for I := 1 to Exceptions do
    try
      if I mod 2 = 0 then
        raise EConvertError.CreateFmt('%s: conversion %d failed', [Tag, I])
      else
        StrToInt(Tag + 'not a number');
    except
      on E: Exception do
        if not FastMMC_OwnsBlock(E) or (Pos(Tag, E.Message) = 0) then
          Inc(Result);
    end;
end;

{---- Main thread ----}

procedure TestMainThread;
var
  H: THeld;
  B0, B1, BAfter: NativeUInt;
  P0: PtrUInt;
begin
  B0 := DllBlocks;
  P0 := PreviousHeapUsed;
  Build(H, 'main');
  B1 := DllBlocks;
  Check(B1 >= B0 + MinimumBlocks, 'main: the DLL holds every block the workload allocated (' +
    IntToStr(B1 - B0) + ' new blocks, at least ' + IntToStr(MinimumBlocks) + ' expected)');
  CheckEquals(0, Verify(H, 'main'), 'main: contents intact, objects and arrays are the DLL''s blocks');
  CheckEquals(P0, PreviousHeapUsed, 'main: Free Pascal''s own heap did not grow');
  Release(H);
  BAfter := DllBlocks;
  Check(BAfter <= B0 + Slack, 'main: the blocks went back to the DLL (' + IntToStr(B0) + ' before, ' +
    IntToStr(BAfter) + ' after)');

  B0 := DllBlocks;
  CheckEquals(0, RaiseAndCatch('main'), 'main: exception objects come from the DLL');
  Check(DllBlocks <= B0 + Slack, 'main: exception objects were freed into the DLL');
  CheckEquals(P0, PreviousHeapUsed, 'main: exceptions left Free Pascal''s heap alone');
end;

{---- Threads ----}

type
  TWorker = class(TThread)
  public
    Tag: string;
    Failures: Integer;
    PreviousHeapGrowth: PtrInt;
    procedure Execute; override;
  end;

var
  Ready: Longint;
  Go: Longint;

procedure TWorker.Execute;
var
  H: THeld;
  P0: PtrUInt;
begin
  P0 := PreviousHeapUsed;
  Build(H, Tag);
  Failures := Verify(H, Tag);
  {Read while the workload is held: none of it may sit in Free Pascal's heap.}
  PreviousHeapGrowth := PtrInt(PreviousHeapUsed - P0);
  InterlockedIncrement(Ready);
  {Hold everything until the main thread has read the counters.}
  while Go = 0 do
    Sleep(1);
  Inc(Failures, Verify(H, Tag));
  Release(H);
  Inc(Failures, RaiseAndCatch(Tag));
end;

procedure TestThreads;
var
  Workers: array[0..ThreadCount - 1] of TWorker;
  I: Integer;
  B0, B1, BAfter: NativeUInt;
  P0: PtrUInt;
begin
  B0 := DllBlocks;
  P0 := PreviousHeapUsed;
  Ready := 0;
  Go := 0;
  for I := 0 to ThreadCount - 1 do
  begin
    Workers[I] := TWorker.Create(True);
    Workers[I].Tag := 'thread' + IntToStr(I);
    Check(FastMMC_OwnsBlock(Workers[I]), 'TThread objects come from the DLL');
  end;
  for I := 0 to ThreadCount - 1 do
    Workers[I].Start;
  while Ready < ThreadCount do
    Sleep(1);
  B1 := DllBlocks;
  Check(B1 >= B0 + ThreadCount * MinimumBlocks, 'threads: the DLL holds every block of the 4 workloads (' +
    IntToStr(B1 - B0) + ' new blocks, at least ' + IntToStr(ThreadCount * MinimumBlocks) + ' expected)');
  InterlockedIncrement(Go);
  for I := 0 to ThreadCount - 1 do
  begin
    Workers[I].WaitFor;
    CheckEquals(0, Workers[I].Failures, Workers[I].Tag + ': contents intact, objects, arrays and exceptions are the DLL''s');
    CheckEquals(0, Workers[I].PreviousHeapGrowth, Workers[I].Tag + ': Free Pascal''s heap did not grow on the thread');
    Workers[I].Free;
  end;
  CheckEquals(P0, PreviousHeapUsed, 'threads: the main thread''s Free Pascal heap did not grow');
  BAfter := DllBlocks;
  Check(BAfter <= B0 + Slack, 'threads: the blocks went back to the DLL (' + IntToStr(B0) + ' before, ' +
    IntToStr(BAfter) + ' after)');
  CheckEquals(0, FastMMC_CheckHeap, 'threads: the DLL''s heap is consistent');
end;

begin
  Check(FastMM_GetInstallationState = mmisInstalled, 'FastMMC is installed');
  Check(FastMMC_DLLHandle <> 0, 'the DLL is loaded');
  Check(IsMemoryManagerSet, 'the RTL sees a memory manager that is not its own');
  TestMainThread;
  TestThreads;
  CheckEquals(0, FastMMC_CheckHeap, 'the DLL''s heap is consistent');
  Halt(Finish('test_rtl'));
end.
