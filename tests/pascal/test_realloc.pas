{ SPDX-License-Identifier: MIT }
{ ReallocMem from Pascal, through FastMMC's adapter of Free Pascal's ReAllocMem (var p): data is
  kept, and FastMM's policy (src/core/policy.h) holds at its boundaries. Sizes come from the DLL
  (MemSize = the usable size), so the test follows the size classes wherever they are.

    small:  stays while new <= usable and new*4 + 64 >= usable; an upsize gets >= 2*usable + 32
    medium: stays while new >= usable/2; below it, a block that new fills at least half of
            (in place when the tail makes a free block, alone or with a free next neighbour;
            below 1,280 bytes a small block); an upsize gets >= usable + usable/4
    large:  stays while new >= usable/2; an upsize gets >= usable + usable/4

  Also Free Pascal's own rules: ReAllocMem(p, 0) frees and sets p to nil, ReAllocMem(nil, n)
  allocates; and SetLength on strings and dynamic arrays, which reach ReallocMem. }
program test_realloc;

uses
  FastMMC, SysUtils, FmmTest;

procedure Fill(P: Pointer; Count: NativeInt; Seed: Byte);
var
  I: NativeInt;
begin
  for I := 0 to Count - 1 do
    PByte(P)[I] := Byte(Seed + I * 7);
end;

function Same(P: Pointer; Count: NativeInt; Seed: Byte): Boolean;
var
  I: NativeInt;
begin
  for I := 0 to Count - 1 do
    if PByte(P)[I] <> Byte(Seed + I * 7) then
      Exit(False);
  Result := True;
end;

function Str(V: NativeInt): string;
begin
  Result := IntToStr(V);
end;

{A fresh block of at least ASize bytes, filled; AUsable is its usable size.}
function Fresh(ASize: NativeInt; out AUsable: NativeInt; ASeed: Byte): Pointer;
begin
  GetMem(Result, ASize);
  AUsable := MemSize(Result);
  Fill(Result, AUsable, ASeed);
end;

procedure TestSmall;
var
  P, Q: Pointer;
  U, K: NativeInt;
begin
  {Downsize: in place down to the smallest k with 4k + 64 >= usable, moved below it.}
  P := Fresh(1000, U, 1);
  Check(FastMMC_OwnsBlock(P) and (U >= 1000), 'small: GetMem(1000) is a DLL block');
  Q := P;
  ReallocMem(Q, U);
  Check(Q = P, 'small: ReallocMem to the usable size stays (' + Str(U) + ')');
  K := (U - 64 + 3) div 4;
  ReallocMem(Q, K);
  Check(Q = P, 'small: ReallocMem to ' + Str(K) + ' (4k + 64 >= ' + Str(U) + ') stays');
  CheckEquals(U, MemSize(Q), 'small: a block that stays keeps its size');
  ReallocMem(Q, K - 1);
  Check(Q <> P, 'small: ReallocMem to ' + Str(K - 1) + ' (4k + 64 < ' + Str(U) + ') moves');
  Check(MemSize(Q) < U, 'small: the moved block is of a smaller class');
  Check(Same(Q, K - 1, 1), 'small: the moved block keeps the data');
  FreeMem(Q);

  {Upsize: moves, to at least 2 * usable + 32, with every usable byte.}
  P := Fresh(100, U, 2);
  Q := P;
  ReallocMem(Q, U + 1);
  Check(Q <> P, 'small: ReallocMem past the usable size moves');
  Check(MemSize(Q) >= 2 * U + 32, 'small: the upsize leaves room: ' + Str(MemSize(Q)) + ' >= 2*' + Str(U) + '+32');
  Check(Same(Q, U, 2), 'small: the upsize keeps the data');
  FreeMem(Q);
end;

procedure TestMedium;
var
  P, Q: Pointer;
  U: NativeInt;
begin
  P := Fresh(10000, U, 3);
  Check(FastMMC_OwnsBlock(P) and (U >= 10000), 'medium: GetMem(10000) is a DLL block');
  Q := P;
  ReallocMem(Q, U div 2);
  Check(Q = P, 'medium: ReallocMem to half the usable size stays');
  CheckEquals(U, MemSize(Q), 'medium: down to half, nothing changes');
  ReallocMem(Q, U div 2 - 1);
  Check(Q = P, 'medium: below half (the tail a block of its own) it shrinks in place');
  Check((MemSize(Q) < U) and (MemSize(Q) >= U div 2 - 1), 'medium: the shrunk block is smaller: ' + Str(MemSize(Q)));
  Check(Same(Q, U div 2 - 1, 3), 'medium: the shrunk block keeps the data');
  FreeMem(Q);

  P := Fresh(10000, U, 4);
  Q := P;
  ReallocMem(Q, 1280);
  Check(Q = P, 'medium: 1280 bytes is still a medium block (in place)');
  Check(MemSize(Q) <= 2560, 'medium: cut to the smallest medium block: ' + Str(MemSize(Q)));
  FreeMem(Q);
  P := Fresh(10000, U, 4);
  Q := P;
  ReallocMem(Q, 1279);
  Check(Q <> P, 'medium: 1279 bytes moves to a small block');
  Check(MemSize(Q) < 2600, 'medium: the block it moved to is small');
  Check(Same(Q, 1279, 4), 'medium: the move keeps the data');
  FreeMem(Q);
  {A block under two of the smallest medium blocks: cut in place when its next neighbour is free,
  else moved to a small block; either way the size fills at least half of the block after.}
  P := Fresh(4000, U, 6);
  Q := P;
  ReallocMem(Q, U div 2 - 1);
  Check(MemSize(Q) <= 2 * (U div 2 - 1), 'medium: the size fills at least half of the new block: ' + Str(MemSize(Q)));
  Check(Same(Q, U div 2 - 1, 6), 'medium: that move keeps the data');
  FreeMem(Q);

  P := Fresh(10000, U, 5);
  Q := P;
  ReallocMem(Q, U + 1);
  Check(MemSize(Q) >= U + U div 4, 'medium: an upsize grows by at least 25%: ' + Str(MemSize(Q)));
  Check(Same(Q, U, 5), 'medium: the upsize keeps the data');
  FreeMem(Q);
end;

procedure TestLarge;
var
  P, Q: Pointer;
  U: NativeInt;
begin
  P := Fresh(1024 * 1024, U, 6);
  Check(FastMMC_OwnsBlock(P) and (U >= 1024 * 1024), 'large: GetMem(1 MB) is a DLL block');
  Q := P;
  ReallocMem(Q, U div 2);
  Check(Q = P, 'large: ReallocMem to half the usable size stays');
  Check(Same(Q, U div 2, 6), 'large: data kept');
  FreeMem(Q);

  P := Fresh(1024 * 1024, U, 7);
  Q := P;
  ReallocMem(Q, U div 2 - 1);
  Check(Q <> P, 'large: below half it moves');
  Check(Same(Q, U div 2 - 1, 7), 'large: the move keeps the data');
  FreeMem(Q);

  P := Fresh(1024 * 1024, U, 8);
  Q := P;
  ReallocMem(Q, U + 1);
  Check(MemSize(Q) >= U + U div 4, 'large: an upsize grows by at least 25%: ' + Str(MemSize(Q)));
  Check(Same(Q, U, 8), 'large: the upsize keeps the data');
  ReallocMem(Q, 10 * 1024 * 1024);
  Check(Same(Q, U, 8), 'large: a 10 MB upsize keeps the data');
  FreeMem(Q);
end;

procedure TestFreePascalRules;
var
  P: Pointer;
  B0: NativeUInt;
begin
  B0 := DllBlocks;
  P := nil;
  ReallocMem(P, 100);
  Check((P <> nil) and FastMMC_OwnsBlock(P), 'ReAllocMem(nil, 100) allocates from the DLL');
  CheckEquals(B0 + 1, DllBlocks, 'ReAllocMem(nil, 100): one more DLL block');
  ReallocMem(P, 0);
  Check(P = nil, 'ReAllocMem(p, 0) sets p to nil');
  CheckEquals(B0, DllBlocks, 'ReAllocMem(p, 0) freed the block');
  P := AllocMem(5000);
  Check(FastMMC_OwnsBlock(P) and (PByte(P)[0] = 0) and (PByte(P)[4999] = 0), 'AllocMem is zeroed and the DLL''s');
  Check(MemSize(P) >= 5000, 'MemSize is the usable size');
  FreeMem(P);
  CheckEquals(0, MemSize(nil), 'MemSize(nil) = 0');
end;

{ReallocMem seen through a layer over the DLL's: for each call on a medium block (usable 2,560 or
more) with a size below half of it, whether the size then fills less than half of the block.}
var
  Below: TMemoryManager;
  MediumShrinks, MediumShrinksKeptLoose: Integer;

function CountingReAllocMem(var P: Pointer; Size: PtrUInt): Pointer;
var
  Before: PtrUInt;
begin
  if P <> nil then
    Before := Below.MemSize(P)
  else
    Before := 0;
  Result := Below.ReAllocMem(P, Size);
  if (Before >= 2560) and (Size > 0) and (Size <= Before div 2) then
  begin
    Inc(MediumShrinks);
    if (P <> nil) and (Below.MemSize(P) > 2 * Size) then
      Inc(MediumShrinksKeptLoose);
  end;
end;

{Free Pascal's SetLength asks ReallocMem for a smaller block whenever the length falls to half of
MemSize or below; a medium block must then get a block that the length fills at least half of,
or SetLength asks again on every character (it did 1,676 times for a string of 2,600 cut back one
character at a time).}
procedure TestShrinkByHalves;
const
  Tops: array[0..2] of Integer = (2600, 4000, 9000);
var
  M: TMemoryManager;
  S: AnsiString;
  I, N, T, Top: Integer;
  Ok: Boolean;
begin
  for T := Low(Tops) to High(Tops) do
  begin
    Top := Tops[T];
    S := '';
    for I := 1 to Top do
      S := S + AnsiChar(Ord('a') + I mod 26);
    GetMemoryManager(Below);
    M := Below;
    M.ReAllocMem := @CountingReAllocMem;
    MediumShrinks := 0;
    MediumShrinksKeptLoose := 0;
    SetMemoryManager(M);
    Ok := True;
    for N := Top - 1 downto 0 do
    begin
      SetLength(S, N);
      if (N > 0) and ((S[1] <> AnsiChar(Ord('a') + 1)) or (S[N] <> AnsiChar(Ord('a') + N mod 26))) then
        Ok := False;
    end;
    SetMemoryManager(Below);
    Check(Ok, 'a string of ' + Str(Top) + ' cut back a character at a time keeps its data');
    Check(MediumShrinks > 0, 'SetLength asked to shrink a medium block (' + Str(Top) + ')');
    CheckEquals(0, MediumShrinksKeptLoose, 'every medium shrink SetLength asked for gave a block ' +
      'the length fills at least half of (' + Str(Top) + ', ' + Str(MediumShrinks) + ' asked)');
  end;
end;

procedure TestSetLength;
var
  S: AnsiString;
  W: UnicodeString;
  A: array of Int64;
  I: Integer;
  Ok: Boolean;
begin
  S := '';
  for I := 1 to 100000 do
    S := S + AnsiChar(Ord('a') + I mod 26);
  Ok := Length(S) = 100000;
  for I := 1 to 100000 do
    if S[I] <> AnsiChar(Ord('a') + I mod 26) then
      Ok := False;
  Check(Ok, 'an AnsiString grown a character at a time keeps its data (100000 appends)');
  SetLength(S, 10);
  Check(S = 'bcdefghijk', 'SetLength shrinks an AnsiString');
  W := '';
  for I := 1 to 50000 do
    W := W + WideChar(Ord('A') + I mod 26);
  Ok := Length(W) = 50000;
  for I := 1 to 50000 do
    if W[I] <> WideChar(Ord('A') + I mod 26) then
      Ok := False;
  Check(Ok, 'a UnicodeString grown a character at a time keeps its data');
  A := nil;
  for I := 0 to 200000 do
  begin
    SetLength(A, I + 1);
    A[I] := Int64(I) * 3;
  end;
  Ok := True;
  for I := 0 to 200000 do
    if A[I] <> Int64(I) * 3 then
      Ok := False;
  Check(Ok, 'a dynamic array grown by SetLength keeps its data (small, medium and large blocks)');
  SetLength(A, 5);
  Check((Length(A) = 5) and (A[4] = 12), 'SetLength shrinks a dynamic array');
end;

begin
  Check(FastMMC_Installed, 'FastMMC is installed');
  TestSmall;
  TestMedium;
  TestLarge;
  TestFreePascalRules;
  TestSetLength;
  TestShrinkByHalves;
  CheckEquals(0, FastMMC_CheckHeap, 'the DLL''s heap is consistent');
  Halt(Finish('test_realloc'));
end.
