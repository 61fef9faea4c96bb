{ SPDX-License-Identifier: MIT }
{ fastmm_pascal_bench: the benchmark's Pascal workload program (bench/README.md). Free Pascal,
  Win32 and Win64. It runs one workload with one memory manager and prints one JSON line with
  the fields fastmm_bench prints, so bench/run drives it as it drives that program:

    fastmm_pascal_bench --workload NAME|all --alloc fastmmc|fpcheap|entries|adapters|cexport|fastmm4avx|cmem|fpcx64mm|floor [--scale F]
    fastmm_pascal_bench --list

  --alloc fastmmc   FastMMC installed (the unit is compiled with FastMM_DisableAutomaticInstall
                    and installed first thing, before the workload's tables are made): the
                    workloads call the RTL's GetMem, FreeMem, ReallocMem, MemSize and string
                    routines, which reach the DLL's Free Pascal entry points.
  --alloc fpcheap   Free Pascal's own heap (FastMMC linked, not installed; the DLL not loaded).
  --alloc entries   FastMMC installed, and the raw workloads call the installed record's
                    fields (GetMemoryManager) directly instead of the RTL's routines: the DLL's
                    Free Pascal entry points without the RTL's own call around each (which
                    every memory manager pays: System.ReAllocMem calls MemoryManager.ReAllocMem).
  --alloc adapters  FastMMC installed with its Pascal adapters, the fallback it keeps for an
                    older DLL or one with no slot left (every slot is taken first, as the test
                    SlotHog does): the path a Free Pascal program took before the DLL had entry
                    points of its own (issue 14 measured it).
  --alloc cexport   FastMMC installed, and the raw workloads call the DLL's C exports instead
                    (fastmm_getmem, fastmm_freemem, fastmm_reallocmem, fastmm_usable_size)
                    through pointers from GetProcAddress: the same operation through the C
                    interface, for the ratio of the Pascal path to it.
  --alloc fastmm4avx
                    only in the build with FASTMM_BENCH_FASTMM4 defined, which has FastMM4
                    (FastMM4-AVX, from a source folder outside this repository) as the first
                    unit of the uses clause, installed by its own initialization; that build
                    takes no other --alloc. bench/peers/build.sh fastmm4avx makes it
                    (bench/peers/README.md).
  --alloc cmem      only in the build with FASTMM_BENCH_CMEM defined (natively,
                    fastmm_pascal_bench_cmem), which has Free Pascal's cmem unit first: the
                    C library's malloc as the memory manager.
  --alloc fpcx64mm  only in the build with FASTMM_BENCH_FPCX64MM defined, which has mORMot 2's
                    mormot.core.fpcx64mm first (Linux x86_64): bench/peers/build.sh mormot2
                    makes it from a mORMot 2 source tree.
  --alloc floor     a stand-in of this program's, installed with SetMemoryManager, that does
                    about the least a memory manager can: blocks of capacity classes four to
                    each power of two, from one arena, freed onto a stack per class and taken
                    from it again; MemSize one load of the capacity; ReallocMem in place while
                    the size is within (capacity/2, capacity] (Free Pascal's SetLength asks for
                    nothing else), else a move with half the size again as headroom (a quarter
                    when it shrinks). A pointer outside the arena goes to the manager it
                    replaced. It checks nothing, holds no lock and gives nothing back: the time
                    of the RTL's own work and its calls through the record, with next to nothing
                    behind them. Every workload but pas_mixed_mt4 (it is not thread-safe).
  The workloads that use strings, lists and objects have no form but the RTL's: they run with
  fastmmc, fpcheap, adapters, fastmm4avx and floor only.
  The DLL (fastmmc32.dll / fastmmc64.dll) is loaded from beside this program.

  The workloads (one operation in brackets):
    pas_string_grow       a string grown one character at a time to 2,600 (S := S + C) and cut
                          back one at a time (SetLength), over and over [an append or a cut]
    pas_realloc_grow      a raw block ReallocMem'ed one byte at a time up to 2,600 and back down
                          to 1 [a ReallocMem]
    pas_realloc_inplace   a 64-byte block resized to 63 bytes and back [a ReallocMem]
    pas_memsize           MemSize of 64 live small blocks in turn [a MemSize]
    pas_getmem_freemem    GetMem and FreeMem of 8-256 bytes [the pair]
    pas_mixed             a mix of what a program does with its heap, drawn from a generator of
                          its own with a fixed seed: strings built by concatenation, a sorted
                          TStringList, dynamic arrays grown by SetLength, small objects holding
                          strings, and GetMem / ReallocMem / FreeMem of 1 byte to 70 KB, each
                          kind with a set of live items of which random ones are replaced or
                          freed; everything is freed at the end, inside the timed region [one
                          step of the mix]
    pas_mixed_mt4         pas_mixed on 4 threads at once, each on data of its own (its own
                          seed), each doing a quarter of pas_mixed's steps [one step of the mix]
  Each one checks what it reads back and fails the run (exit code 3) when a byte was lost. }
program fastmm_pascal_bench;

{$mode delphi}
{$H+}

uses
{$if defined(UNIX) and (defined(FASTMM_BENCH_FASTMM4) or defined(FASTMM_BENCH_FPCX64MM))}
  {Linux: before a peer whose initialization makes locks (FastMMC brings it itself).}
  cthreads,
{$ifend}
{$ifdef FASTMM_BENCH_FASTMM4}
  FastMM4, {first: installed by its initialization, before any other unit allocates}
{$endif}
{$ifdef FASTMM_BENCH_FPCX64MM}
  mormot.core.fpcx64mm, {first, as FastMM4 above: mORMot 2's manager (Linux x86_64)}
{$endif}
{$ifdef FASTMM_BENCH_CMEM}
  cmem, {first, as FastMM4 above: Free Pascal's manager on the C library's malloc (Linux)}
{$endif}
  FastMMC, SysUtils, Classes, BenchOS;

type
  TAllocKind = (akFastMMC, akFpcHeap, akEntries, akAdapters, akCExport, akFastMM4, akCMem, akFpcX64MM, akFloor);

const
  {The manager whose unit this build has first, of those that need a build of their own besides
  FastMM4 (akFloor: none). Typed, so that the checks of it compile in every build.}
{$if defined(FASTMM_BENCH_CMEM)}
  BuiltInPeer: TAllocKind = akCMem;
{$elseif defined(FASTMM_BENCH_FPCX64MM)}
  BuiltInPeer: TAllocKind = akFpcX64MM;
{$else}
  BuiltInPeer: TAllocKind = akFloor;
{$ifend}

type

  TRun = record
    Kind: TAllocKind;
    Scale: Double;
    Ops: Int64;
    Check: Int64;
    PeakLive: NativeUInt;
    T0, T1: Int64;
    BaseMem: NativeUInt;
  end;

  TWorkload = record
    Name: string;
    Description: string;
    Raw: Boolean; {runs with --alloc entries and cexport}
    Floor: Boolean; {runs with --alloc floor}
    Threads: Integer;
    Run: procedure(var R: TRun);
  end;


var
  {The C exports, for --alloc cexport.}
  CGetMem: function(ASize: NativeUInt): Pointer; cdecl;
  CFreeMem: function(APointer: Pointer): Integer; cdecl;
  CReallocMem: function(APointer: Pointer; ASize: NativeUInt): Pointer; cdecl;
  CUsableSize: function(APointer: Pointer): NativeUInt; cdecl;
  {The installed record, for --alloc entries.}
  MM: TMemoryManager;
  WorkloadName: string;

procedure Fail(const AWhat: string);
begin
  WriteLn(StdErr, 'fastmm_pascal_bench: ', WorkloadName, ': ', AWhat);
  Halt(3);
end;

function Count(const R: TRun; ABase: Double): Integer;
begin
  Result := Trunc(ABase * R.Scale);
  if Result < 1 then
    Result := 1;
end;

function UnderWine: Boolean;
begin
  Result := GetProcAddress(GetModuleHandleA('ntdll.dll'), 'wine_get_version') <> nil;
end;

{The process's memory now and at its peak: the working set under Wine (whose peak commit is
no peak; bench/README.md), the commit on Windows, the resident set on Linux (BenchOS).}
procedure ProcessMemory(out ACurrent, APeak: NativeUInt);
var
  C: TProcessMemoryCounters;
begin
  FillChar(C, SizeOf(C), 0);
  C.cb := SizeOf(C);
  if not K32GetProcessMemoryInfo(GetCurrentProcess, C, SizeOf(C)) then
    Fail('GetProcessMemoryInfo failed');
{$ifdef MSWINDOWS}
  if not UnderWine then
  begin
    ACurrent := C.PagefileUsage;
    APeak := C.PeakPagefileUsage;
    Exit;
  end;
{$endif}
  ACurrent := C.WorkingSetSize;
  APeak := C.PeakWorkingSetSize;
end;

procedure Ready(var R: TRun);
var
  Peak: NativeUInt;
begin
  ProcessMemory(R.BaseMem, Peak);
end;

procedure BeginTimed(var R: TRun);
begin
  QueryPerformanceCounter(R.T0);
end;

procedure EndTimed(var R: TRun);
begin
  QueryPerformanceCounter(R.T1);
end;

{------------------------The workloads------------------------}

{Appends ACount characters one at a time; a procedure of its own so that nothing but S holds
a string afterwards.}
procedure GrowString(var S: AnsiString; ACount: Integer);
var
  N: Integer;
  C: AnsiChar;
begin
  for N := Length(S) + 1 to ACount do
  begin
    C := AnsiChar(Ord('a') + N mod 26);
    S := S + C;
  end;
end;

procedure StringGrow(var R: TRun);
var
  Cycles, I: Integer;
  N: Integer;
  S: AnsiString;
begin
  Cycles := Count(R, 300);
  Ready(R);
  S := '';
  BeginTimed(R);
  for I := 1 to Cycles do
  begin
    GrowString(S, 2600);
    if (S[1] <> AnsiChar(Ord('a') + 1)) or (S[2600] <> AnsiChar(Ord('a') + 2600 mod 26)) then
      Fail('the string lost characters');
    Inc(R.Check, Ord(S[1300]));
    for N := 2599 downto 0 do
      SetLength(S, N);
  end;
  EndTimed(R);
  R.Ops := Int64(Cycles) * 5200;
  R.PeakLive := 2600;
end;

procedure ReallocGrow(var R: TRun);
var
  Cycles, I: Integer;
  N: Integer;
  P: PByte;
begin
  Cycles := Count(R, 300);
  Ready(R);
  BeginTimed(R);
  for I := 1 to Cycles do
  begin
    P := nil;
    if R.Kind = akCExport then
    begin
      for N := 1 to 2600 do
      begin
        P := CReallocMem(P, N);
        P[N - 1] := Byte(N);
      end;
      for N := 2599 downto 1 do
      begin
        P := CReallocMem(P, N);
        if P[N - 1] <> Byte(N) then
          Fail('ReallocMem lost a byte');
      end;
      Inc(R.Check, P[0]);
      CFreeMem(P);
    end
    else if R.Kind = akEntries then
    begin
      for N := 1 to 2600 do
      begin
        MM.ReAllocMem(Pointer(P), N);
        P[N - 1] := Byte(N);
      end;
      for N := 2599 downto 1 do
      begin
        MM.ReAllocMem(Pointer(P), N);
        if P[N - 1] <> Byte(N) then
          Fail('ReallocMem lost a byte');
      end;
      Inc(R.Check, P[0]);
      MM.FreeMem(P);
    end
    else
    begin
      for N := 1 to 2600 do
      begin
        ReallocMem(P, N);
        P[N - 1] := Byte(N);
      end;
      for N := 2599 downto 1 do
      begin
        ReallocMem(P, N);
        if P[N - 1] <> Byte(N) then
          Fail('ReallocMem lost a byte');
      end;
      Inc(R.Check, P[0]);
      FreeMem(P);
    end;
  end;
  EndTimed(R);
  R.Ops := Int64(Cycles) * 5199;
  R.PeakLive := 2600;
end;

procedure ReallocInPlace(var R: TRun);
var
  N, I: Integer;
  P: PByte;
begin
  N := Count(R, 2000000);
  Ready(R);
  if R.Kind = akCExport then
    P := CGetMem(64)
  else
    GetMem(P, 64);
  FillChar(P^, 64, $5A);
  BeginTimed(R);
  if R.Kind = akCExport then
    for I := 1 to N do
    begin
      P := CReallocMem(P, 63);
      P := CReallocMem(P, 64);
    end
  else if R.Kind = akEntries then
    for I := 1 to N do
    begin
      MM.ReAllocMem(Pointer(P), 63);
      MM.ReAllocMem(Pointer(P), 64);
    end
  else
    for I := 1 to N do
    begin
      ReallocMem(P, 63);
      ReallocMem(P, 64);
    end;
  EndTimed(R);
  if (P[0] <> $5A) or (P[62] <> $5A) then
    Fail('ReallocMem lost the contents');
  R.Check := P[0];
  if R.Kind = akCExport then
    CFreeMem(P)
  else
    FreeMem(P);
  R.Ops := 2 * Int64(N);
  R.PeakLive := 64;
end;

const
  CSmallSizes: array[0..15] of Integer = (8, 24, 40, 16, 64, 100, 32, 256, 48, 12, 128, 80, 200, 20, 160, 56);

procedure MemSizes(var R: TRun);
var
  N, I: Integer;
  Blocks: array[0..63] of Pointer;
  J: Integer;
  Sum: NativeUInt;
begin
  N := Count(R, 4000000);
  Ready(R);
  for J := 0 to 63 do
    if R.Kind = akCExport then
      Blocks[J] := CGetMem(CSmallSizes[J and 15] * (1 + J div 16))
    else
      GetMem(Blocks[J], CSmallSizes[J and 15] * (1 + J div 16));
  Sum := 0;
  BeginTimed(R);
  if R.Kind = akCExport then
    for I := 0 to N - 1 do
      Inc(Sum, CUsableSize(Blocks[I and 63]))
  else if R.Kind = akEntries then
    for I := 0 to N - 1 do
      Inc(Sum, MM.MemSize(Blocks[I and 63]))
  else
    for I := 0 to N - 1 do
      Inc(Sum, MemSize(Blocks[I and 63]));
  EndTimed(R);
  for J := 0 to 63 do
  begin
    if (R.Kind <> akCExport) and (NativeInt(MemSize(Blocks[J])) < CSmallSizes[J and 15] * (1 + J div 16)) then
      Fail('MemSize below the size asked for');
    if R.Kind = akCExport then
      CFreeMem(Blocks[J])
    else
      FreeMem(Blocks[J]);
  end;
  if Sum = 0 then
    Fail('MemSize answered 0');
  R.Check := Sum mod 1000003;
  R.Ops := N;
  R.PeakLive := 64 * 256 * 4;
end;

procedure GetMemFreeMem(var R: TRun);
var
  N, I: Integer;
  P: PNativeInt;
  Sum: NativeInt;
begin
  N := Count(R, 2000000);
  Ready(R);
  Sum := 0;
  BeginTimed(R);
  if R.Kind = akCExport then
    for I := 0 to N - 1 do
    begin
      P := CGetMem(CSmallSizes[I and 15]);
      P^ := NativeInt(I);
      Inc(Sum, P^);
      CFreeMem(P);
    end
  else if R.Kind = akEntries then
    for I := 0 to N - 1 do
    begin
      P := MM.GetMem(CSmallSizes[I and 15]);
      P^ := NativeInt(I);
      Inc(Sum, P^);
      MM.FreeMem(P);
    end
  else
    for I := 0 to N - 1 do
    begin
      GetMem(P, CSmallSizes[I and 15]);
      P^ := NativeInt(I);
      Inc(Sum, P^);
      FreeMem(P);
    end;
  EndTimed(R);
  if Sum <> NativeInt(Int64(N) * (N - 1) div 2) then
    Fail('a block lost its word');
  R.Check := Sum and $FFFFFF;
  R.Ops := N;
  R.PeakLive := 256;
end;

{------------------------pas_mixed, pas_mixed_mt4------------------------}

{A mix of what a program does with its heap, in steps drawn from a generator of the workload's
own. Each kind of step has a set of live items; a step picks one at random and replaces it,
grows it or frees it, so that the heap holds blocks of every age. Every item is checked when it
is replaced or freed, and everything is freed at the end of the run (inside the timed region).
The steps' shares: 25% a string built by concatenation, 20% an object holding strings, 15% a
line added to a sorted TStringList (half of its lines deleted at random when it is full), 10% a
dynamic array grown by SetLength (and dropped when it reaches 16 KB), 30% a raw block of 1 byte
to 70 KB made by GetMem, resized by ReallocMem or freed by FreeMem.}

const
  CMixSteps = 100000;     {pas_mixed's steps at scale 1; pas_mixed_mt4's threads share them}
  CMixThreads = 4;
  CMixStrings = 512;      {live strings}
  CMixObjects = 512;      {live objects}
  CMixBlocks = 256;       {live raw blocks}
  CMixArrays = 32;        {dynamic arrays}
  CMixArrayMax = 4096;    {an array's elements (16 KB) when it is dropped}
  CMixListMax = 1024;     {the TStringList's lines when half of them are deleted}
  CMixMaxBlock = 70 * 1024;
  CMixWords: array[0..7] of string = ('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta',
    'eta', 'theta');

type
  {A small class holding strings.}
  TMixItem = class
  public
    Id: Integer;
    Name, Note: string;
    constructor Create(AId: Integer);
  end;

  {A sorted list that compares its lines byte by byte (CompareStr), as the default does not:
  Free Pascal's TStringList asks the locale (Windows' CompareString), which is not what this
  workload measures.}
  TMixList = class(TStringList)
  protected
    function DoCompareText(const S1, S2: string): PtrInt; override;
  end;

  TIntegers = array of Integer;

  {One run's data (one thread's, in pas_mixed_mt4).}
  TMixState = record
    Rng: QWord;
    Strings: array[0..CMixStrings - 1] of string;
    Items: array[0..CMixObjects - 1] of TMixItem;
    Blocks: array[0..CMixBlocks - 1] of PByte;
    BlockSizes: array[0..CMixBlocks - 1] of NativeUInt;
    Arrays: array[0..CMixArrays - 1] of TIntegers;
    List: TMixList;
    Live, PeakLive: NativeUInt; {bytes asked for in raw blocks and arrays}
    Check: Int64;
    {Keeps one thread's counters and the next one's generator off a shared cache line.}
    Pad: array[0..127] of Byte;
  end;

  TMixThread = class(TThread)
  private
    FIndex, FSteps: Integer;
    FDone: PRTLEvent; {set when its steps are done (MixedThreads)}
  protected
    procedure Execute; override;
  public
    constructor Create(AIndex, ASteps: Integer);
  end;

var
  MixStates: array[0..CMixThreads - 1] of TMixState;

constructor TMixItem.Create(AId: Integer);
begin
  inherited Create;
  Id := AId;
  Name := 'item' + IntToStr(AId);
end;

function TMixList.DoCompareText(const S1, S2: string): PtrInt;
begin
  Result := CompareStr(S1, S2);
end;

{The workload's generator: xorshift64 (shifts 13, 7, 17) with a fixed seed per run, so every
memory manager gets the same steps in the same order. The upper 32 bits are used.}
function MixNext(var S: TMixState): Cardinal;
var
  X: QWord;
begin
  X := S.Rng;
  X := X xor (X shl 13);
  X := X xor (X shr 7);
  X := X xor (X shl 17);
  S.Rng := X;
  Result := Cardinal(X shr 32);
end;

function MixBelow(var S: TMixState; N: Cardinal): Cardinal;
begin
  Result := MixNext(S) mod N;
end;

procedure MixCount(var S: TMixState; AOld, ANew: NativeUInt);
begin
  S.Live := S.Live - AOld + ANew;
  if S.Live > S.PeakLive then
    S.PeakLive := S.Live;
end;

procedure MixString(var S: TMixState);
var
  K, I: Integer;
  T: string;
begin
  K := MixBelow(S, CMixStrings);
  if S.Strings[K] <> '' then
  begin
    T := S.Strings[K];
    if (T[1] <> '<') or (T[Length(T)] <> '>') then
      Fail('a string lost its characters');
    Inc(S.Check, Length(T));
    T := '';
    if MixBelow(S, 4) = 0 then
    begin
      S.Strings[K] := ''; {a random free}
      Exit;
    end;
  end;
  T := '<' + CMixWords[MixBelow(S, 8)];
  for I := 0 to MixBelow(S, 8) do
    T := T + ' ' + IntToStr(MixBelow(S, 100000)) + ':' + CMixWords[MixBelow(S, 8)];
  S.Strings[K] := T + '>';
end;

procedure MixObject(var S: TMixState);
var
  K: Integer;
  Item: TMixItem;
begin
  K := MixBelow(S, CMixObjects);
  Item := S.Items[K];
  if Item <> nil then
  begin
    if (Item.Name <> 'item' + IntToStr(Item.Id)) or (Copy(Item.Note, 1, Length(Item.Name)) <> Item.Name) then
      Fail('an object lost its strings');
    Inc(S.Check, Item.Id);
    S.Items[K] := nil;
    Item.Free;
    if MixBelow(S, 2) = 0 then
      Exit; {a random free}
  end;
  Item := TMixItem.Create(MixBelow(S, 1000000));
  Item.Note := Item.Name + '/' + S.Strings[MixBelow(S, CMixStrings)];
  S.Items[K] := Item;
end;

procedure MixListLine(var S: TMixState);
var
  I: Integer;
begin
  S.List.Add(CMixWords[MixBelow(S, 8)] + IntToStr(MixBelow(S, 100000)));
  if S.List.Count < CMixListMax then
    Exit;
  for I := 1 to CMixListMax div 2 do
    S.List.Delete(MixBelow(S, S.List.Count));
  for I := 1 to S.List.Count - 1 do
    if CompareStr(S.List[I - 1], S.List[I]) > 0 then
      Fail('the sorted list is out of order');
  Inc(S.Check, Length(S.List[0]));
end;

procedure MixArray(var S: TMixState);
var
  K, Old, N, I: Integer;
begin
  K := MixBelow(S, CMixArrays);
  Old := Length(S.Arrays[K]);
  if Old >= CMixArrayMax then
  begin
    if (S.Arrays[K][0] <> 0) or (S.Arrays[K][Old - 1] <> Old - 1) then
      Fail('a dynamic array lost its contents');
    Inc(S.Check, Old);
    S.Arrays[K] := nil;
    MixCount(S, Old * SizeOf(Integer), 0);
    Exit;
  end;
  N := Old + 1 + Integer(MixBelow(S, 64));
  SetLength(S.Arrays[K], N);
  for I := Old to N - 1 do
    S.Arrays[K][I] := I;
  MixCount(S, Old * SizeOf(Integer), N * SizeOf(Integer));
end;

{1 byte to 70 KB: 60% up to 256 bytes, 30% up to 4 KB, 10% above.}
function MixBlockSize(var S: TMixState): NativeUInt;
var
  Band: Cardinal;
begin
  Band := MixBelow(S, 100);
  if Band < 60 then
    Result := 1 + MixBelow(S, 256)
  else if Band < 90 then
    Result := 257 + MixBelow(S, 4096 - 256)
  else
    Result := 4097 + MixBelow(S, CMixMaxBlock - 4096);
end;

{A raw block's marks: its slot in the first byte, its size in the last (a block of 1 byte has
only the first).}
procedure MixMark(P: PByte; ASize: NativeUInt; ASlot: Integer);
begin
  P[ASize - 1] := Byte(ASize);
  P[0] := Byte(ASlot);
end;

function MixMarked(P: PByte; ASize: NativeUInt; ASlot: Integer): Boolean;
begin
  Result := (P[0] = Byte(ASlot)) and ((ASize = 1) or (P[ASize - 1] = Byte(ASize)));
end;

procedure MixBlock(var S: TMixState);
var
  K: Integer;
  P: PByte;
  Old, N: NativeUInt;
begin
  K := MixBelow(S, CMixBlocks);
  P := S.Blocks[K];
  Old := S.BlockSizes[K];
  if P = nil then
  begin
    N := MixBlockSize(S);
    GetMem(P, N);
  end
  else
  begin
    if not MixMarked(P, Old, K) then
      Fail('a raw block lost its marks');
    Inc(S.Check, Old);
    if MixBelow(S, 3) = 0 then
    begin
      FreeMem(P); {a random free}
      P := nil;
      N := 0;
    end
    else
    begin
      N := MixBlockSize(S);
      ReallocMem(P, N);
      if (P[0] <> Byte(K)) or ((N >= Old) and not MixMarked(P, Old, K)) then
        Fail('ReallocMem lost a block''s contents');
    end;
  end;
  if P <> nil then
    MixMark(P, N, K);
  S.Blocks[K] := P;
  S.BlockSizes[K] := N;
  MixCount(S, Old, N);
end;

{Frees (and checks) everything the steps left.}
procedure MixFinish(var S: TMixState);
var
  K: Integer;
begin
  for K := 0 to CMixStrings - 1 do
  begin
    Inc(S.Check, Length(S.Strings[K]));
    S.Strings[K] := '';
  end;
  for K := 0 to CMixObjects - 1 do
    if S.Items[K] <> nil then
    begin
      Inc(S.Check, S.Items[K].Id);
      S.Items[K].Free;
      S.Items[K] := nil;
    end;
  for K := 0 to CMixBlocks - 1 do
    if S.Blocks[K] <> nil then
    begin
      if not MixMarked(S.Blocks[K], S.BlockSizes[K], K) then
        Fail('a raw block lost its marks');
      FreeMem(S.Blocks[K]);
      S.Blocks[K] := nil;
      MixCount(S, S.BlockSizes[K], 0);
      S.BlockSizes[K] := 0;
    end;
  for K := 0 to CMixArrays - 1 do
  begin
    MixCount(S, Length(S.Arrays[K]) * SizeOf(Integer), 0);
    S.Arrays[K] := nil;
  end;
  Inc(S.Check, S.List.Count);
  S.List.Free;
  S.List := nil;
  if S.Live <> 0 then
    Fail('the live-byte count did not come back to 0');
end;

{One run of the mix on the data of slot AIndex (its own seed), from nothing to nothing.}
procedure MixRun(AIndex, ASteps: Integer);
var
  I: Integer;
begin
  MixStates[AIndex].Live := 0;
  MixStates[AIndex].PeakLive := 0;
  MixStates[AIndex].Check := 0;
  MixStates[AIndex].Rng := QWord(2654435761) * QWord(AIndex + 1);
  MixStates[AIndex].List := TMixList.Create;
  MixStates[AIndex].List.Sorted := True;
  MixStates[AIndex].List.Duplicates := dupAccept;
  for I := 1 to ASteps do
    case MixBelow(MixStates[AIndex], 100) of
      0..24: MixString(MixStates[AIndex]);
      25..44: MixObject(MixStates[AIndex]);
      45..59: MixListLine(MixStates[AIndex]);
      60..69: MixArray(MixStates[AIndex]);
    else
      MixBlock(MixStates[AIndex]);
    end;
  MixFinish(MixStates[AIndex]);
end;

constructor TMixThread.Create(AIndex, ASteps: Integer);
begin
  FIndex := AIndex;
  FSteps := ASteps;
  FDone := RTLEventCreate;
  inherited Create(True);
end;

procedure TMixThread.Execute;
begin
  MixRun(FIndex, FSteps);
  RTLEventSetEvent(FDone);
end;

procedure Mixed(var R: TRun);
var
  Steps: Integer;
begin
  Steps := Count(R, CMixSteps);
  Ready(R);
  BeginTimed(R);
  MixRun(0, Steps);
  EndTimed(R);
  R.Ops := Steps;
  R.Check := MixStates[0].Check;
  R.PeakLive := MixStates[0].PeakLive;
end;

{The threads are made (suspended) before the timed region and freed after it; the region is
from the first Start to the last thread's end of its steps, which each thread signals: Free
Pascal's TThread.WaitFor on Linux, called from the main thread, waits in steps of 100 ms
(CheckSynchronize's timeout), so a region ended by it measured 0.1 s, 0.2 s or 0.3 s whatever
the memory manager did.}
procedure MixedThreads(var R: TRun);
var
  Steps, I: Integer;
  Threads: array[0..CMixThreads - 1] of TMixThread;
begin
  Steps := Count(R, CMixSteps div CMixThreads);
  Ready(R);
  for I := 0 to CMixThreads - 1 do
    Threads[I] := TMixThread.Create(I, Steps);
  BeginTimed(R);
  for I := 0 to CMixThreads - 1 do
    Threads[I].Start;
  for I := 0 to CMixThreads - 1 do
    RTLEventWaitFor(Threads[I].FDone);
  EndTimed(R);
  for I := 0 to CMixThreads - 1 do
    Threads[I].WaitFor;
  for I := 0 to CMixThreads - 1 do
  begin
    if Threads[I].FatalException <> nil then
      Fail('thread ' + IntToStr(I) + ' raised ' + Threads[I].FatalException.ClassName);
    RTLEventDestroy(Threads[I].FDone);
    Threads[I].Free;
    Inc(R.Check, MixStates[I].Check);
    Inc(R.PeakLive, MixStates[I].PeakLive);
  end;
  R.Ops := CMixThreads * Int64(Steps);
end;

const
  CWorkloads: array[0..6] of TWorkload = (
    (Name: 'pas_string_grow'; Description: 'a string grown a character at a time to 2,600 and cut back';
      Raw: False; Floor: True; Threads: 1; Run: StringGrow),
    (Name: 'pas_realloc_grow'; Description: 'ReallocMem one byte at a time up to 2,600 and back';
      Raw: True; Floor: True; Threads: 1; Run: ReallocGrow),
    (Name: 'pas_realloc_inplace'; Description: 'ReallocMem 64 -> 63 -> 64 in place';
      Raw: True; Floor: True; Threads: 1; Run: ReallocInPlace),
    (Name: 'pas_memsize'; Description: 'MemSize of live small blocks';
      Raw: True; Floor: True; Threads: 1; Run: MemSizes),
    (Name: 'pas_getmem_freemem'; Description: 'GetMem + FreeMem of 8-256 bytes';
      Raw: True; Floor: True; Threads: 1; Run: GetMemFreeMem),
    (Name: 'pas_mixed'; Description: 'strings, a sorted TStringList, SetLength, objects, GetMem/ReallocMem/FreeMem to 70 KB';
      Raw: False; Floor: True; Threads: 1; Run: Mixed),
    (Name: 'pas_mixed_mt4'; Description: 'pas_mixed on 4 threads at once, each on its own data';
      Raw: False; Floor: False; Threads: CMixThreads; Run: MixedThreads));

{------------------------The floor (--alloc floor)------------------------}

{Blocks of 16 << k capacity classes with four classes to each power of two (a capacity is at
most 1.25x the size asked for); each block has a 16-byte header: its class, then its capacity
in the word just below the block. Freed blocks go on a stack per class; the arena is bumped
only when a class's stack is empty. Single-threaded: pas_mixed_mt4 does not run with it.}
const
  CFloorArenaBytes = 256 * 1024 * 1024;
  CFloorClasses = 4 * 30;
var
  FloorArena: PByte;
  FloorTop: NativeUInt;
  FloorFree: array[0..CFloorClasses - 1] of Pointer;
  FloorBelow: TMemoryManager;

function FloorOwns(P: Pointer): Boolean; inline;
begin
  Result := NativeUInt(PByte(P) - FloorArena) < CFloorArenaBytes;
end;

function FloorGetMem(ASize: PtrUInt): Pointer;
var
  N, Bit, Sub, Index, Capacity: PtrUInt;
begin
  if ASize > CFloorArenaBytes div 2 then
    Fail('a block larger than the floor''s arena');
  N := ASize;
  if N < 16 then
    N := 16;
  Dec(N);
  Bit := BsrDWord(DWord(N));
  Sub := (N shr (Bit - 2)) and 3;
  Index := (Bit - 3) * 4 + Sub;
  Result := FloorFree[Index];
  if Result <> nil then
  begin
    FloorFree[Index] := PPointer(Result)^;
    Exit;
  end;
  Capacity := (4 + Sub + 1) shl (Bit - 2);
  if FloorTop + 32 + Capacity > CFloorArenaBytes then
    Fail('the floor''s arena is full');
  Result := FloorArena + FloorTop + 16;
  PPtrUInt(PByte(Result) - 2 * SizeOf(PtrUInt))^ := Index;
  PPtrUInt(PByte(Result) - SizeOf(PtrUInt))^ := Capacity;
  Inc(FloorTop, 16 + (Capacity + 15) and not PtrUInt(15)); {every block 16-aligned}
end;

function FloorFreeMem(P: Pointer): PtrUInt;
var
  Index: PtrUInt;
begin
  if not FloorOwns(P) then
  begin
    if P = nil then
      Exit(0);
    Exit(FloorBelow.FreeMem(P));
  end;
  Index := PPtrUInt(PByte(P) - 2 * SizeOf(PtrUInt))^;
  PPointer(P)^ := FloorFree[Index];
  FloorFree[Index] := P;
  Result := 0;
end;

function FloorFreeMemSize(P: Pointer; ASize: PtrUInt): PtrUInt;
begin
  Result := FloorFreeMem(P);
end;

function FloorAllocMem(ASize: PtrUInt): Pointer;
begin
  Result := FloorGetMem(ASize);
  FillChar(Result^, ASize, 0);
end;

function FloorMemSize(P: Pointer): PtrUInt;
begin
  if not FloorOwns(P) then
    Exit(FloorBelow.MemSize(P));
  Result := PPtrUInt(PByte(P) - SizeOf(PtrUInt))^;
end;

function FloorReAllocMem(var P: Pointer; ASize: PtrUInt): Pointer;
var
  Capacity: PtrUInt;
  Q: Pointer;
begin
  Q := P;
  if FloorOwns(Q) then
  begin
    Capacity := PPtrUInt(PByte(Q) - SizeOf(PtrUInt))^;
    if (ASize <= Capacity) and (ASize > Capacity shr 1) then
      Exit(Q);
    if ASize = 0 then
    begin
      FloorFreeMem(Q);
      P := nil;
      Exit(nil);
    end;
    if ASize > Capacity then
    begin
      Result := FloorGetMem(ASize + ASize shr 1);
      Move(Q^, Result^, Capacity);
    end
    else
    begin
      Result := FloorGetMem(ASize + ASize shr 2);
      Move(Q^, Result^, ASize);
    end;
    FloorFreeMem(Q);
    P := Result;
    Exit;
  end;
  if Q = nil then
  begin
    if ASize = 0 then
      Exit(nil);
    P := FloorGetMem(ASize);
    Exit(P);
  end;
  Result := FloorBelow.ReAllocMem(P, ASize);
end;

procedure InstallFloor;
var
  M: TMemoryManager;
begin
  GetMem(FloorArena, CFloorArenaBytes + 16);
  FloorArena := PByte((NativeUInt(FloorArena) + 15) and not NativeUInt(15));
  FloorTop := 0;
  FillChar(FloorFree, SizeOf(FloorFree), 0);
  GetMemoryManager(FloorBelow);
  M := FloorBelow;
  M.GetMem := @FloorGetMem;
  M.FreeMem := @FloorFreeMem;
  M.FreeMemSize := @FloorFreeMemSize;
  M.AllocMem := @FloorAllocMem;
  M.ReAllocMem := @FloorReAllocMem;
  M.MemSize := @FloorMemSize;
  SetMemoryManager(M);
end;

{------------------------The program------------------------}

{--alloc adapters: binds every slot of the DLL's Free Pascal records to bindings of no use, so
that FastMMC finds none and installs its adapters. Never called: those records are not
installed.}
procedure NotCalled;
begin
  Fail('a record bound only to take a slot was called');
end;

procedure TakeEverySlot;
type
  TBindings = record
    Size: NativeUInt;
    PreviousFreeMem, PreviousReAllocMem, PreviousMemSize, PreviousGetMem, HeapError: Pointer;
    ReturnNilIfGrowHeapFails, AllocateFromLibrary: PBoolean;
  end;
  TEntries = array[0..5] of Pointer;
  TGetFpcMemoryManager = function(var AManager: TEntries; var ABindings: TBindings): Integer; cdecl;
var
  Get: TGetFpcMemoryManager;
  B: TBindings;
  E: TEntries;
  I: Integer;
  Flags: array[0..15] of Boolean;
begin
  @Get := GetProcAddress(LoadLibraryA(CFastMMC_DLLName), 'fastmm_get_fpc_memory_manager');
  if not Assigned(Get) then
    Exit; {an older DLL: FastMMC uses its adapters anyway}
  for I := 0 to High(Flags) do
  begin
    B.Size := SizeOf(B);
    B.PreviousFreeMem := @NotCalled;
    B.PreviousReAllocMem := @NotCalled;
    B.PreviousMemSize := @NotCalled;
    B.PreviousGetMem := @NotCalled;
    B.HeapError := @NotCalled;
    B.ReturnNilIfGrowHeapFails := @Flags[I];
    B.AllocateFromLibrary := @Flags[I];
    if Get(E, B) = 0 then
      Exit;
  end;
  Fail('the DLL bound more than 16 records: no slot is left for the adapters to be tested');
end;

function KindName(AKind: TAllocKind): string;
begin
  case AKind of
    akFastMMC: Result := 'fastmmc';
    akFpcHeap: Result := 'fpcheap';
    akEntries: Result := 'entries';
    akAdapters: Result := 'adapters';
    akFastMM4: Result := 'fastmm4avx';
    akCMem: Result := 'cmem';
    akFpcX64MM: Result := 'fpcx64mm';
    akFloor: Result := 'floor';
  else
    Result := 'cexport';
  end;
end;

procedure RunOne(const W: TWorkload; AKind: TAllocKind; AScale: Double);
var
  R: TRun;
  Freq: Int64;
  Current, Peak, Mask, SystemMask: NativeUInt;
  Seconds, NsPerOp: Double;
  F: TFormatSettings;
begin
  WorkloadName := W.Name;
  FillChar(R, SizeOf(R), 0);
  R.Kind := AKind;
  R.Scale := AScale;
  W.Run(R);
  ProcessMemory(Current, Peak);
  QueryPerformanceFrequency(Freq);
  Seconds := (R.T1 - R.T0) / Freq;
  NsPerOp := 0;
  if R.Ops > 0 then
    NsPerOp := Seconds * 1e9 / R.Ops;
  Mask := 0;
  if not GetProcessAffinityMask(GetCurrentProcess, Mask, SystemMask) then
    Mask := 0;
  F := DefaultFormatSettings;
  F.DecimalSeparator := '.';
  WriteLn(Format('{"workload":"%s","alloc":"%s","bits":%d,"threads":%d,"scale":%s,"ops":%d,' +
    '"seconds":%s,"ns_per_op":%s,"mem_kind":"%s","peak_mem":%d,"base_mem":%d,"end_mem":%d,' +
    '"peak_live":%d,"affinity":%d,"check":%d}',
    [W.Name, KindName(AKind), SizeOf(Pointer) * 8, W.Threads, FloatToStr(AScale, F), R.Ops,
     FormatFloat('0.000000000', Seconds, F), FormatFloat('0.0000', NsPerOp, F),
     {$ifdef MSWINDOWS}BoolToStr(UnderWine, 'peak-working-set', 'peak-commit'){$else}'peak-rss'{$endif}, Int64(Peak), Int64(R.BaseMem),
     Int64(Current), Int64(R.PeakLive), Int64(Mask), R.Check]));
  Flush(Output);
end;

procedure Usage;
begin
  WriteLn(StdErr, 'usage: fastmm_pascal_bench --workload NAME|all --alloc fastmmc|fpcheap|entries|adapters|cexport|fastmm4avx|cmem|fpcx64mm|floor [--scale F]');
  WriteLn(StdErr, '       fastmm_pascal_bench --list');
  Halt(2);
end;

procedure Main;
var
  I: Integer;
  WName, AName: string;
  Scale: Double;
  Kind: TAllocKind;
  F: TFormatSettings;
  H: NativeUInt;
begin
  F := DefaultFormatSettings;
  F.DecimalSeparator := '.';
  WName := '';
  AName := '';
  Scale := 1;
  I := 1;
  while I <= ParamCount do
  begin
    if ParamStr(I) = '--list' then
    begin
      for I := Low(CWorkloads) to High(CWorkloads) do
        WriteLn(CWorkloads[I].Name, #9, CWorkloads[I].Threads, #9, CWorkloads[I].Description);
      Exit;
    end;
    if I = ParamCount then
      Usage;
    if ParamStr(I) = '--workload' then
      WName := ParamStr(I + 1)
    else if ParamStr(I) = '--alloc' then
      AName := ParamStr(I + 1)
    else if ParamStr(I) = '--scale' then
      Scale := StrToFloat(ParamStr(I + 1), F)
    else
      Usage;
    Inc(I, 2);
  end;
  if AName = 'fastmmc' then
    Kind := akFastMMC
  else if AName = 'fpcheap' then
    Kind := akFpcHeap
  else if AName = 'entries' then
    Kind := akEntries
  else if AName = 'adapters' then
    Kind := akAdapters
  else if AName = 'cexport' then
    Kind := akCExport
  else if AName = 'fastmm4avx' then
    Kind := akFastMM4
  else if AName = 'cmem' then
    Kind := akCMem
  else if AName = 'fpcx64mm' then
    Kind := akFpcX64MM
  else if AName = 'floor' then
    Kind := akFloor
  else
    Usage;
  if (WName = '') or not (Scale > 0) then
    Usage;
{$ifdef FASTMM_BENCH_FASTMM4}
  if Kind <> akFastMM4 then
  begin
    WriteLn(StdErr, 'fastmm_pascal_bench: this build has FastMM4 installed: --alloc fastmm4avx only');
    Halt(2);
  end;
  {Qualified: FastMMC, later in the uses clause, has routines of the same names.}
  if FastMM4.FastMM_GetInstallationState <> FastMM4.mmisInstalled then
  begin
    WriteLn(StdErr, 'fastmm_pascal_bench: FastMM4 is not the installed memory manager');
    Halt(2);
  end;
{$else}
  if Kind = akFastMM4 then
  begin
    WriteLn(StdErr, 'fastmm_pascal_bench: --alloc fastmm4avx needs the build with FastMM4 ',
      '(bench/peers/build.sh fastmm4avx)');
    Halt(2);
  end;
{$endif}
  {The builds with another manager's unit first (cmem, fpcx64mm) run that manager only, and only
  they run it.}
  if (BuiltInPeer <> akFloor) and (Kind <> BuiltInPeer) then
  begin
    WriteLn(StdErr, 'fastmm_pascal_bench: this build has ', KindName(BuiltInPeer), ' installed: --alloc ',
      KindName(BuiltInPeer), ' only');
    Halt(2);
  end;
  if (Kind in [akCMem, akFpcX64MM]) and (Kind <> BuiltInPeer) then
  begin
    WriteLn(StdErr, 'fastmm_pascal_bench: --alloc ', AName, ' needs the build with its unit first ',
      '(cmem: fastmm_pascal_bench_cmem; fpcx64mm: bench/peers/build.sh mormot2)');
    Halt(2);
  end;
  if Kind = akFloor then
    InstallFloor;
  if not (Kind in [akFpcHeap, akFastMM4, akCMem, akFpcX64MM, akFloor]) then
  begin
    if Kind = akAdapters then
      TakeEverySlot;
    if not FastMM_Initialize then
    begin
      WriteLn(StdErr, 'fastmm_pascal_bench: FastMMC could not be installed (is ', CFastMMC_DLLName, ' beside the program?)');
      Halt(2);
    end;
    H := FastMMC_DLLHandle;
    @CGetMem := GetProcAddress(H, 'fastmm_getmem');
    @CFreeMem := GetProcAddress(H, 'fastmm_freemem');
    @CReallocMem := GetProcAddress(H, 'fastmm_reallocmem');
    @CUsableSize := GetProcAddress(H, 'fastmm_usable_size');
    GetMemoryManager(MM);
    {The record is the one this run measures: the DLL's own entry points, or the adapters.
    (GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | _UNCHANGED_REFCOUNT)}
    if not GetModuleHandleExW(6, PPointer(@@MM.ReAllocMem)^, H) then
      H := 0;
    {Linked in (Linux, FASTMMC_STATIC) the library's code and the program's are one module: no check.}
    if {$ifdef FASTMMC_STATIC}False and{$endif} ((H = FastMMC_DLLHandle) <> (Kind <> akAdapters)) then
    begin
      WriteLn(StdErr, 'fastmm_pascal_bench: the installed ReAllocMem is not the one --alloc ', AName, ' measures');
      Halt(2);
    end;
  end;
  for I := Low(CWorkloads) to High(CWorkloads) do
    if ((WName = 'all') or (WName = CWorkloads[I].Name)) and
      ((Kind in [akFastMMC, akFpcHeap, akAdapters, akFastMM4, akCMem, akFpcX64MM]) or ((Kind = akFloor) and CWorkloads[I].Floor) or
       ((Kind in [akEntries, akCExport]) and CWorkloads[I].Raw)) then
    begin
      RunOne(CWorkloads[I], Kind, Scale);
      if WName <> 'all' then
        Exit;
    end;
  if WName <> 'all' then
  begin
    WriteLn(StdErr, 'fastmm_pascal_bench: unknown workload ', WName, ' (or none with --alloc ', AName, ')');
    Halt(2);
  end;
end;

begin
  Main;
end.
