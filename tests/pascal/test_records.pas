{ SPDX-License-Identifier: MIT }
{ Free Pascal's memory manager record as FastMMC installs it: the DLL's own entry points
  (fastmm_get_fpc_memory_manager), bound to the manager they replaced.
    - the installed GetMem, FreeMem, FreeMemSize, AllocMem, ReAllocMem and MemSize are code of
      the DLL, not Pascal adapters;
    - data survives ReAllocMem through the var-pointer entry (the seed's cases: a string grown
      one character at a time to 2,600 and cut back, a raw ReallocMem one byte at a time up to
      2,600 and back), and in place means the same pointer;
    - MemSize is the DLL's usable size; nil and size 0 mean what Free Pascal means;
    - a double free, a ReAllocMem of a freed block and a pointer inside a block raise
      EInvalidPointer from the DLL's slow path, through Pascal's unwinding (Win32 and Linux) or
      SEH (Win64) across the DLL's frames, and never reach the previous manager: a record the test
      binds itself to a counting previous manager shows no call, and Free Pascal's heap (the
      installed record's previous manager) does not change; the previous manager's own blocks
      do reach it; after a thousand raises the heap is consistent and works on 4 threads;
    - out of memory raises EOutOfMemory, or gives nil with ReturnNilIfGrowHeapFails, and
      ReAllocMem leaves the block as it was.
  Compiled a second time with -dFASTMMC_TEST_NO_SLOT (test_records_no_slot): the unit SlotHog
  takes every slot of the DLL before FastMMC installs, so FastMMC falls back to its Pascal
  adapters, and the same behaviour must hold. }
program test_records;

uses
{$ifdef FASTMMC_TEST_NO_SLOT}
  SlotHog,
{$endif}
  FastMMC, SysUtils, Classes, FmmTest, RaiseChecks;

{$ifdef MSWINDOWS}
function GetModuleHandleExW(AFlags: Cardinal; AAddress: Pointer; out AModule: NativeUInt): LongBool;
  stdcall; external 'kernel32.dll';
function GetProcAddress(AModule: NativeUInt; AName: PAnsiChar): Pointer; stdcall; external 'kernel32.dll';
{$else}
{Linux: the library's exports through dlsym (loaded) or as the program's own (linked in), and the
module that holds a code address through dladdr.}
type
  TDlInfo = record
    FileName: PAnsiChar;
    Base: Pointer;
    SymbolName: PAnsiChar;
    SymbolAddress: Pointer;
  end;
function dladdr(AAddress: Pointer; var AInfo: TDlInfo): Longint; cdecl; external 'c';
{$ifdef FASTMMC_STATIC}
procedure LinkedGetFpcMemoryManager; cdecl; external name 'fastmm_get_fpc_memory_manager';
{$else}
function dlsym(AHandle: Pointer; AName: PAnsiChar): Pointer; cdecl; external 'c';
{$endif}

function GetProcAddress(AModule: NativeUInt; AName: PAnsiChar): Pointer;
begin
{$ifdef FASTMMC_STATIC}
  Result := @LinkedGetFpcMemoryManager;
{$else}
  Result := dlsym(Pointer(AModule), AName);
{$endif}
end;
{$endif}

const
  CFromAddress = 4;       {GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS}
  CUnchangedRefCount = 2; {GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT}
  {More than any address space holds.}
  CHuge = High(PtrUInt) div 2 - $20000;

function CodeOf(const AProcVar): Pointer;
begin
  Result := PPointer(@AProcVar)^;
end;

{Is this code address inside the DLL's image?}
function InDll(ACode: Pointer): Boolean;
{$ifdef MSWINDOWS}
var
  M: NativeUInt;
begin
  M := 0;
  Result := GetModuleHandleExW(CFromAddress or CUnchangedRefCount, ACode, M) and (M = FastMMC_DLLHandle);
end;
{$else}
var
  Code, Library_: TDlInfo;
begin
  {Linux, loaded: in the same module as one of the library's exports.}
  Result := (dladdr(ACode, Code) <> 0) and
    (dladdr(GetProcAddress(FastMMC_DLLHandle, 'fastmm_check_heap'), Library_) <> 0) and (Code.Base = Library_.Base);
end;
{$endif}

procedure TestInstalledRecord;
var
  MM: TMemoryManager;
  Expected: Boolean;
begin
  GetMemoryManager(MM);
{$ifdef FASTMMC_STATIC}
  {Linked in, the library's code and the unit's are one module: nothing to tell them apart by.}
  Check(Assigned(MM.GetMem) and Assigned(MM.MemSize), 'the record is installed');
  Exit;
{$endif}
{$ifdef FASTMMC_TEST_NO_SLOT}
  Expected := False;
{$else}
  Expected := True;
{$endif}
  Check(InDll(CodeOf(MM.GetMem)) = Expected, 'GetMem is the DLL''s own: ' + BoolToStr(Expected, True));
  Check(InDll(CodeOf(MM.FreeMem)) = Expected, 'FreeMem is the DLL''s own: ' + BoolToStr(Expected, True));
  Check(InDll(CodeOf(MM.FreeMemSize)) = Expected, 'FreeMemSize is the DLL''s own: ' + BoolToStr(Expected, True));
  Check(InDll(CodeOf(MM.AllocMem)) = Expected, 'AllocMem is the DLL''s own: ' + BoolToStr(Expected, True));
  Check(InDll(CodeOf(MM.ReAllocMem)) = Expected, 'ReAllocMem is the DLL''s own: ' + BoolToStr(Expected, True));
  Check(InDll(CodeOf(MM.MemSize)) = Expected, 'MemSize is the DLL''s own: ' + BoolToStr(Expected, True));
  Check(not InDll(CodeOf(MM.GetHeapStatus)), 'GetHeapStatus is the unit''s');
end;

{In a procedure of its own, so that the compiler's temporary strings are gone at its end.}
procedure AppendCharacters(var S: AnsiString; ACount: Integer);
var
  N: Integer;
begin
  for N := Length(S) + 1 to ACount do
    S := S + AnsiChar(Ord('a') + N mod 26);
end;

procedure TestReallocData;
var
  P, Before: PByte;
  N, I: Integer;
  Ok, InPlace: Boolean;
  S: AnsiString;
  Blocks0: NativeUInt;
begin
  {A raw ReallocMem one byte at a time up to 2,600 and back.}
  P := nil;
  Ok := True;
  InPlace := True;
  for N := 1 to 2600 do
  begin
    Before := P;
    if (P <> nil) and (NativeInt(MemSize(P)) >= N) and (N * 4 + 64 >= NativeInt(MemSize(P))) and (N <= 2556) then
    begin
      ReallocMem(P, N);
      InPlace := InPlace and (P = Before);
    end
    else
      ReallocMem(P, N);
    P[N - 1] := Byte(N * 7);
  end;
  for I := 0 to 2599 do
    Ok := Ok and (P[I] = Byte((I + 1) * 7));
  Check(Ok, 'ReallocMem one byte at a time up to 2,600: every byte kept');
  Check(InPlace, 'a small block stays where FastMM''s rule says it stays');
  Check(FastMMC_OwnsBlock(P), 'the block is the DLL''s');
  for N := 2600 downto 1 do
  begin
    ReallocMem(P, N);
    for I := 0 to N - 1 do
      if P[I] <> Byte((I + 1) * 7) then
        Ok := False;
  end;
  Check(Ok, 'and back down to 1 byte: every byte kept');
  ReallocMem(P, 0);
  Check(P = nil, 'ReallocMem(P, 0) frees and sets P to nil');

  {A string grown one character at a time to 2,600 and cut back.}
  Blocks0 := DllBlocks;
  S := '';
  AppendCharacters(S, 2600);
  CheckEquals(Blocks0 + 1, DllBlocks, 'the string is one block of the DLL');
  Ok := Length(S) = 2600;
  for N := 1 to 2600 do
    Ok := Ok and (S[N] = AnsiChar(Ord('a') + N mod 26));
  for N := 2600 downto 1 do
  begin
    SetLength(S, N);
    Ok := Ok and (S[N] = AnsiChar(Ord('a') + N mod 26)) and (S[1] = AnsiChar(Ord('a') + 1));
  end;
  Check(Ok, 'a string grown one character at a time to 2,600 and cut back keeps its text');
  S := '';
  CheckEquals(Blocks0, DllBlocks, 'and is gone when emptied');
end;

procedure TestMemSize;
const
  CSizes: array[0..7] of Integer = (0, 1, 12, 100, 2556, 3000, 100000, 600000);
var
  P, Q: Pointer;
  I: Integer;
begin
  for I := Low(CSizes) to High(CSizes) do
  begin
    GetMem(P, CSizes[I]);
    Check(FastMMC_OwnsBlock(P), 'GetMem(' + IntToStr(CSizes[I]) + ') is a block of the DLL');
    CheckEquals(FastMM_BlockMaximumUserBytes(P), MemSize(P), 'MemSize of a ' + IntToStr(CSizes[I]) +
      '-byte block is its usable size');
    Check(NativeInt(MemSize(P)) >= CSizes[I], 'at least the size asked for');
    Q := P;
    ReallocMem(Q, MemSize(P));
    Check((Q = P) or (CSizes[I] > 2556), 'ReallocMem to the usable size stays in place');
    FreeMem(Q);
  end;
  CheckEquals(0, MemSize(nil), 'MemSize(nil) = 0');
  GetMem(P, 1);
  CheckEquals(12, MemSize(P), 'the smallest block holds 12 bytes');
  FreeMem(P);
end;

procedure TestNil;
var
  P: Pointer;
  B0: NativeUInt;
begin
  B0 := DllBlocks;
  FreeMem(nil);
  P := nil;
  ReallocMem(P, 0);
  Check(P = nil, 'ReallocMem(nil, 0) stays nil');
  ReallocMem(P, 40);
  Check(FastMMC_OwnsBlock(P), 'ReallocMem(nil, 40) allocates from the DLL');
  CheckEquals(B0 + 1, DllBlocks, 'one block more');
  ReallocMem(P, 0);
  Check(P = nil, 'ReallocMem(P, 0) frees');
  CheckEquals(B0, DllBlocks, 'and the block is gone');
  P := AllocMem(0);
  Check(P <> nil, 'AllocMem(0) gives a block, as Free Pascal''s heap does');
  FreeMem(P);
  P := GetMem(0);
  Check(FastMMC_OwnsBlock(P), 'GetMem(0) gives a block of the DLL');
  FreeMem(P, 0);
  Check(not FastMMC_OwnsBlock(P), 'FreeMem(P, size) frees it');
end;

{------------------------Bad pointers------------------------}

{The address the EInvalidPointer of a second FreeMem of P names: nil when none was raised.}
function FreeMemErrorAddress(P: Pointer): Pointer;
begin
  Result := nil;
  try
    FreeMem(P);
  except
    on EInvalidPointer do
      Result := ExceptAddr;
  end;
end;

{Through the installed record: EInvalidPointer, and Free Pascal's heap (its previous manager)
is not touched.}
procedure TestBadPointersInstalled;
const
  CSizes: array[0..3] of Integer = (40, 2000, 50000, 500000);
var
  P, Mate: PByte;
  I: Integer;
  Heap0: PtrUInt;
  Err: Pointer;
begin
  Heap0 := PreviousHeapUsed;
  for I := Low(CSizes) to High(CSizes) do
  begin
    GetMem(Mate, CSizes[I]);
    GetMem(P, CSizes[I]);
    FreeMem(P);
    Check(RaisesInvalidPointer(bcFreeMem, P), 'a second FreeMem of ' + IntToStr(CSizes[I]) + ' bytes raises EInvalidPointer');
{$ifndef FASTMMC_STATIC}
    {The library's slow paths are reached by a tail jump, so the error names the caller's code,
    not the library's (linked in, the two are one module).}
    Err := FreeMemErrorAddress(P);
    Check((Err <> nil) and not InDll(Err), 'the error of a second FreeMem of ' + IntToStr(CSizes[I]) + ' bytes names an address outside the library');
{$endif}
    Check(RaisesInvalidPointer(bcReallocMem, P), 'a ReallocMem of a freed ' + IntToStr(CSizes[I]) + '-byte block raises EInvalidPointer');
    Check(RaisesInvalidPointer(bcFreeMemSize, P), 'FreeMem(P, size) of a freed ' + IntToStr(CSizes[I]) + '-byte block raises EInvalidPointer');
    Check(RaisesInvalidPointer(bcReallocMemZero, P), 'ReallocMem(P, 0) of a freed ' + IntToStr(CSizes[I]) + '-byte block raises EInvalidPointer');
    Check(RaisesInvalidPointer(bcFreeMem, Mate + 16), 'FreeMem inside a ' + IntToStr(CSizes[I]) + '-byte block raises EInvalidPointer');
    Check(RaisesInvalidPointer(bcReallocMem, Mate + 16), 'ReallocMem inside a ' + IntToStr(CSizes[I]) + '-byte block raises EInvalidPointer');
    Check(RaisesInvalidPointer(bcFreeMem, Mate + 1), 'FreeMem of a misaligned pointer raises EInvalidPointer');
    CheckEquals(0, MemSize(P), 'MemSize of a freed block: 0');
    Check(FastMMC_OwnsBlock(Mate), 'the block the pointers were inside is untouched');
    FreeMem(Mate);
  end;
  CheckEquals(Heap0, PreviousHeapUsed, 'Free Pascal''s heap (the previous manager) saw none of it');
end;

{A record the test binds itself to a previous manager that only counts: not one call for a
bad pointer of the DLL's, one for a pointer of no memory of the DLL's.}
type
  TFpcEntries = record
    GetMem: function(ASize: PtrUInt): Pointer;
    FreeMem: function(APointer: Pointer): PtrUInt;
    FreeMemSize: function(APointer: Pointer; ASize: PtrUInt): PtrUInt;
    AllocMem: function(ASize: PtrUInt): Pointer;
    ReAllocMem: function(var APointer: Pointer; ASize: PtrUInt): Pointer;
    MemSize: function(APointer: Pointer): PtrUInt;
  end;
  TFpcBindings = record
    Size: NativeUInt;
    PreviousFreeMem: function(APointer: Pointer): PtrUInt;
    PreviousReAllocMem: function(var APointer: Pointer; ASize: PtrUInt): Pointer;
    PreviousMemSize: function(APointer: Pointer): PtrUInt;
    PreviousGetMem: function(ASize: PtrUInt): Pointer;
    HeapError: procedure(ACode: Longint; AAddress: Pointer); cdecl;
    ReturnNilIfGrowHeapFails: PBoolean;
    AllocateFromLibrary: PBoolean;
  end;
  TGetFpcMemoryManager = function(var AManager: TFpcEntries; var ABindings: TFpcBindings): Integer; cdecl;

var
  PreviousCalls, ErrorsRaised: Integer;
  Counting: TFpcEntries;
  CountingBindings: TFpcBindings;
  CountingReturnNil, CountingFromDll: Boolean;

function CountFreeMem(APointer: Pointer): PtrUInt;
begin
  Inc(PreviousCalls);
  Result := 0;
end;

function CountReAllocMem(var APointer: Pointer; ASize: PtrUInt): Pointer;
begin
  Inc(PreviousCalls);
  Result := APointer;
end;

function CountMemSize(APointer: Pointer): PtrUInt;
begin
  Inc(PreviousCalls);
  Result := 4321;
end;

function CountGetMem(ASize: PtrUInt): Pointer;
begin
  Inc(PreviousCalls);
  Result := nil;
end;

{Raises straight from here, through the DLL's frames.}
procedure RaiseHeapError(ACode: Longint; AAddress: Pointer); cdecl;
begin
  Inc(ErrorsRaised);
  if ACode = 204 then
    raise EInvalidPointer.Create('invalid pointer (test)')
  else
    raise EOutOfMemory.Create('out of memory (test)');
end;

procedure MakeCountingCall(ACall: TBadCall; var Q: Pointer);
begin
  case ACall of
    bcFreeMem: Counting.FreeMem(Q);
    bcReallocMem: Counting.ReAllocMem(Q, 100);
    bcFreeMemSize: Counting.FreeMemSize(Q, 100);
  else
    Counting.ReAllocMem(Q, 0);
  end;
end;

function CountingRaises(ACall: TBadCall; P: Pointer): Boolean;
begin
  Result := RaisesInvalidPointerBy(MakeCountingCall, ACall, P);
end;

procedure TestCountingPreviousManager;
var
  GetFpc: TGetFpcMemoryManager;
  P, Mate: PByte;
  Foreign: array[0..63] of Byte;
  F: Pointer;
  I, Round: Integer;
begin
  GetFpc := TGetFpcMemoryManager(GetProcAddress(FastMMC_DLLHandle, 'fastmm_get_fpc_memory_manager'));
  Check(Assigned(GetFpc), 'the DLL exports fastmm_get_fpc_memory_manager');
  if not Assigned(GetFpc) then
    Exit;
  FillChar(CountingBindings, SizeOf(CountingBindings), 0);
  CountingBindings.Size := SizeOf(CountingBindings);
  CountingBindings.PreviousFreeMem := @CountFreeMem;
  CountingBindings.PreviousReAllocMem := @CountReAllocMem;
  CountingBindings.PreviousMemSize := @CountMemSize;
  CountingBindings.PreviousGetMem := @CountGetMem;
  CountingBindings.HeapError := @RaiseHeapError;
  CountingReturnNil := False;
  CountingFromDll := True;
  CountingBindings.ReturnNilIfGrowHeapFails := @CountingReturnNil;
  CountingBindings.AllocateFromLibrary := @CountingFromDll;
{$ifdef FASTMMC_TEST_NO_SLOT}
  CheckEquals(0, GetFpc(Counting, CountingBindings), 'no slot left: the DLL refuses to bind');
{$else}
  CheckEquals(1, GetFpc(Counting, CountingBindings), 'the DLL binds a record to a counting previous manager');
  for Round := 1 to 250 do
    for I := 0 to 3 do
    begin
      {Sizes the raise itself does not allocate (an exception object, its frames), so a freed
      block is not handed out again between two checks.}
      GetMem(Mate, 300 + I * 700);
      P := Counting.GetMem(300 + I * 700);
      Counting.FreeMem(P);
      Check(CountingRaises(bcFreeMem, P), 'a second FreeMem raises EInvalidPointer from the DLL');
      Check(CountingRaises(bcReallocMem, P), 'a ReAllocMem of a freed block raises EInvalidPointer from the DLL');
      Check(CountingRaises(bcFreeMemSize, P), 'FreeMemSize of a freed block raises EInvalidPointer from the DLL');
      Check(CountingRaises(bcReallocMemZero, Mate + 32), 'ReAllocMem(P, 0) inside a block raises EInvalidPointer');
      Check(CountingRaises(bcFreeMem, Mate + 32), 'FreeMem inside a block raises EInvalidPointer');
      CheckEquals(0, Counting.MemSize(P), 'MemSize of a freed block: 0');
      FreeMem(Mate);
    end;
  CheckEquals(0, PreviousCalls, 'no bad pointer of the DLL reached the previous manager');
  CheckEquals(250 * 4 * 5, ErrorsRaised, 'each one raised');
  F := @Foreign[16];
  CheckEquals(0, Counting.FreeMem(F), 'a pointer in no memory of the DLL''s goes to the previous manager');
  CheckEquals(4321, Counting.MemSize(F), 'its MemSize too');
  Counting.ReAllocMem(F, 10);
  CheckEquals(3, PreviousCalls, 'each one call');
  CountingFromDll := False;
  F := nil;
  Counting.ReAllocMem(F, 10);
  CheckEquals(4, PreviousCalls, 'ReAllocMem(nil, n) after the unit uninstalled: the previous manager''s GetMem');
  CountingFromDll := True;
  {Out of memory, raised from the DLL's frames too.}
  P := Counting.GetMem(100);
  P[99] := 99;
  F := P;
  try
    Counting.ReAllocMem(F, CHuge);
    Check(False, 'ReAllocMem to more than the address space: EOutOfMemory expected');
  except
    on EOutOfMemory do
      Check((F = P) and (P[99] = 99), 'ReAllocMem out of memory: EOutOfMemory, the block kept');
  end;
  Counting.FreeMem(P);
{$endif}
  {A thousand exceptions through the DLL's frames left nothing locked or half done.}
  CheckEquals(0, FastMMC_CheckHeap, 'the DLL''s heap is consistent after the raises');
end;

{After the raises, the heap still works on several threads at once.}
type
  TChurn = class(TThread)
  protected
    procedure Execute; override;
  public
    Ok: Boolean;
  end;

procedure TChurn.Execute;
var
  I: Integer;
  L: TStringList;
begin
  L := TStringList.Create;
  for I := 1 to 20000 do
  begin
    L.Add(IntToStr(I));
    if L.Count > 100 then
      L.Delete(0);
  end;
  Ok := (L.Count = 100) and (L[99] = '20000');
  L.Free;
end;

procedure TestThreadsAfterRaises;
var
  T: array[0..3] of TChurn;
  I: Integer;
  Ok: Boolean;
begin
  for I := 0 to 3 do
    T[I] := TChurn.Create(False);
  Ok := True;
  for I := 0 to 3 do
  begin
    T[I].WaitFor;
    Ok := Ok and T[I].Ok;
    T[I].Free;
  end;
  Check(Ok, '4 threads churn strings after the raises');
end;

procedure TestOutOfMemory;
var
  P, Q: PByte;
  Raised: Boolean;
begin
  ReturnNilIfGrowHeapFails := False;
  Raised := False;
  try
    GetMem(P, CHuge);
  except
    on EOutOfMemory do
      Raised := True;
  end;
  Check(Raised, 'GetMem of more than the address space raises EOutOfMemory');
  Raised := False;
  try
    P := AllocMem(CHuge);
  except
    on EOutOfMemory do
      Raised := True;
  end;
  Check(Raised, 'AllocMem too');
  GetMem(P, 1000);
  FillChar(P^, 1000, $42);
  Q := P;
  Raised := False;
  try
    ReallocMem(Q, CHuge);
  except
    on EOutOfMemory do
      Raised := True;
  end;
  Check(Raised and (Q = P) and (P[0] = $42) and (P[999] = $42), 'ReallocMem: EOutOfMemory, the block as it was');
  ReturnNilIfGrowHeapFails := True;
  GetMem(Q, CHuge);
  Check(Q = nil, 'with ReturnNilIfGrowHeapFails GetMem gives nil');
  Q := P;
  Check(ReallocMem(Q, CHuge) = nil, 'and ReallocMem nil');
  Check((Q = P) and (P[500] = $42), 'leaving the block as it was');
  FastMM_SetMemoryUsageLimit(1);
  Q := P;
  Check(ReallocMem(Q, 5000000) = nil, 'past the memory usage limit: nil too');
  Check(Q = P, 'the block kept');
  FastMM_SetMemoryUsageLimit(0);
  ReturnNilIfGrowHeapFails := False;
  FreeMem(P);
end;

begin
  Check(FastMMC_Installed, 'FastMMC is installed');
{$ifdef FASTMMC_TEST_NO_SLOT}
  CheckEquals(8, SlotsTaken, 'SlotHog took every slot before FastMMC installed');
{$endif}
  TestInstalledRecord;
  TestReallocData;
  TestMemSize;
  TestNil;
  TestBadPointersInstalled;
  TestCountingPreviousManager;
  TestThreadsAfterRaises;
  TestOutOfMemory;
  CheckEquals(0, FastMMC_CheckHeap, 'the DLL''s heap is consistent');
{$ifdef FASTMMC_TEST_NO_SLOT}
  Halt(Finish('test_records_no_slot'));
{$else}
  Halt(Finish('test_records'));
{$endif}
end.
