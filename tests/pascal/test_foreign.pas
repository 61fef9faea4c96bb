{ SPDX-License-Identifier: MIT }
{ Blocks of the previous memory manager: Free Pascal's RTL allocates before the first unit's
  initialization, so FastMMC is handed blocks it did not allocate. Here the unit EarlyAlloc,
  listed before FastMMC, allocates a raw block, a string and an object from Free Pascal's heap;
  after the install they are freed and resized by that heap (the DLL refuses them, FastMMC
  passes them on) with their data intact, while new blocks come from the DLL.

  At exit EarlyAlloc's finalization runs after FastMMC's and frees blocks that came from the
  DLL: the program must end cleanly (run_check.cmake checks the exit code and the line it
  prints). }
program test_foreign;

uses
  EarlyAlloc, FastMMC, SysUtils, FmmTest;

{The early blocks: resized and freed by the heap they came from. (In a procedure, so that the
temporary strings of the check messages are gone before the DLL's blocks are counted.)}
procedure UseEarlyBlocks(out APreviousHeapShrank: Boolean);
var
  I: Integer;
  Ok: Boolean;
  P0: PtrUInt;
  Copy: AnsiString;
begin
  P0 := PreviousHeapUsed;

  Check(not FastMMC_OwnsBlock(EarlyBlock), 'the early block is not the DLL''s');
  Check(MemSize(EarlyBlock) >= 3000, 'MemSize of the early block comes from its own heap: ' + IntToStr(MemSize(EarlyBlock)));
  ReallocMem(EarlyBlock, 200000);
  Ok := not FastMMC_OwnsBlock(EarlyBlock);
  for I := 0 to 2999 do
    if PByte(EarlyBlock)[I] <> Byte(I) then
      Ok := False;
  Check(Ok, 'growing the early block: Free Pascal''s heap resized it, data kept');
  ReallocMem(EarlyBlock, 100);
  Ok := not FastMMC_OwnsBlock(EarlyBlock);
  for I := 0 to 99 do
    if PByte(EarlyBlock)[I] <> Byte(I) then
      Ok := False;
  Check(Ok, 'shrinking the early block: data kept');
  FreeMem(EarlyBlock);

  Copy := EarlyString;
  EarlyString := EarlyString + '-and-more';
  Check(EarlyString = Copy + '-and-more', 'appending to the early string');
  Copy := '';
  EarlyString := '';
  EarlyObject.Free;
  APreviousHeapShrank := PreviousHeapUsed < P0;
end;

var
  Moved: NativeInt;
  Shrank: Boolean;
  B0: NativeUInt;
begin
  Check(FastMMC_Installed, 'FastMMC is installed after a unit that allocated');
  B0 := DllBlocks;
  UseEarlyBlocks(Shrank);
  Moved := NativeInt(DllBlocks) - NativeInt(B0);
  CheckEquals(0, Moved, 'the early blocks never touched the DLL');
  Check(Shrank, 'the early blocks went back to Free Pascal''s heap');
  B0 := DllBlocks;
  LateString := 'late-' + IntToStr(12345);
  GetMem(LateBlock, 70000);
  SetLength(LateArray, 10);
  Check(FastMMC_OwnsBlock(LateBlock), 'new blocks come from the DLL');
  Check(DllBlocks >= B0 + 3, 'the late blocks are in the DLL''s count');
  CheckEquals(0, FastMMC_CheckHeap, 'the DLL''s heap is consistent');
  ExitCode := Finish('test_foreign');
end.
