{ SPDX-License-Identifier: MIT }
{ fastmm_pascal_bench: the benchmark's Pascal workload program (bench/README.md). Free Pascal,
  Win32 and Win64. It runs one workload with one memory manager and prints one JSON line with
  the fields fastmm_bench prints, so bench/run drives it as it drives that program:

    fastmm_pascal_bench --workload NAME|all --alloc fastmmc|fpcheap|entries|adapters|cexport [--scale F]
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
  The string workload has no form but the RTL's: it runs with fastmmc and fpcheap only.
  The DLL (fastmmc32.dll / fastmmc64.dll) is loaded from beside this program.

  The workloads (one operation in brackets):
    pas_string_grow       a string grown one character at a time to 2,600 (S := S + C) and cut
                          back one at a time (SetLength), over and over [an append or a cut]
    pas_realloc_grow      a raw block ReallocMem'ed one byte at a time up to 2,600 and back down
                          to 1 [a ReallocMem]
    pas_realloc_inplace   a 64-byte block resized to 63 bytes and back [a ReallocMem]
    pas_memsize           MemSize of 64 live small blocks in turn [a MemSize]
    pas_getmem_freemem    GetMem and FreeMem of 8-256 bytes [the pair]
  Each one checks what it reads back and fails the run (exit code 3) when a byte was lost. }
program fastmm_pascal_bench;

{$mode delphi}
{$H+}

uses
  FastMMC, SysUtils;

type
  TProcessMemoryCounters = record
    cb: Cardinal;
    PageFaultCount: Cardinal;
    PeakWorkingSetSize, WorkingSetSize, QuotaPeakPagedPoolUsage, QuotaPagedPoolUsage,
      QuotaPeakNonPagedPoolUsage, QuotaNonPagedPoolUsage, PagefileUsage, PeakPagefileUsage: NativeUInt;
  end;

  TAllocKind = (akFastMMC, akFpcHeap, akEntries, akAdapters, akCExport);

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
    Run: procedure(var R: TRun);
  end;

function QueryPerformanceCounter(var ACount: Int64): LongBool; stdcall; external 'kernel32.dll';
function QueryPerformanceFrequency(var AFrequency: Int64): LongBool; stdcall; external 'kernel32.dll';
function GetCurrentProcess: NativeUInt; stdcall; external 'kernel32.dll';
function GetProcessAffinityMask(AProcess: NativeUInt; var AProcessMask, ASystemMask: NativeUInt): LongBool;
  stdcall; external 'kernel32.dll';
function K32GetProcessMemoryInfo(AProcess: NativeUInt; var ACounters: TProcessMemoryCounters;
  ASize: Cardinal): LongBool; stdcall; external 'kernel32.dll';
function GetModuleHandleA(AName: PAnsiChar): NativeUInt; stdcall; external 'kernel32.dll';
function LoadLibraryA(AName: PAnsiChar): NativeUInt; stdcall; external 'kernel32.dll';
function GetModuleHandleExW(AFlags: Cardinal; AAddress: Pointer; out AModule: NativeUInt): LongBool;
  stdcall; external 'kernel32.dll';
function GetProcAddress(AModule: NativeUInt; AName: PAnsiChar): Pointer; stdcall; external 'kernel32.dll';

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
no peak; bench/README.md), the commit on Windows.}
procedure ProcessMemory(out ACurrent, APeak: NativeUInt);
var
  C: TProcessMemoryCounters;
begin
  FillChar(C, SizeOf(C), 0);
  C.cb := SizeOf(C);
  if not K32GetProcessMemoryInfo(GetCurrentProcess, C, SizeOf(C)) then
    Fail('GetProcessMemoryInfo failed');
  if UnderWine then
  begin
    ACurrent := C.WorkingSetSize;
    APeak := C.PeakWorkingSetSize;
  end
  else
  begin
    ACurrent := C.PagefileUsage;
    APeak := C.PeakPagefileUsage;
  end;
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

const
  CWorkloads: array[0..4] of TWorkload = (
    (Name: 'pas_string_grow'; Description: 'a string grown a character at a time to 2,600 and cut back';
      Raw: False; Run: StringGrow),
    (Name: 'pas_realloc_grow'; Description: 'ReallocMem one byte at a time up to 2,600 and back';
      Raw: True; Run: ReallocGrow),
    (Name: 'pas_realloc_inplace'; Description: 'ReallocMem 64 -> 63 -> 64 in place';
      Raw: True; Run: ReallocInPlace),
    (Name: 'pas_memsize'; Description: 'MemSize of live small blocks';
      Raw: True; Run: MemSizes),
    (Name: 'pas_getmem_freemem'; Description: 'GetMem + FreeMem of 8-256 bytes';
      Raw: True; Run: GetMemFreeMem));

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
  WriteLn(Format('{"workload":"%s","alloc":"%s","bits":%d,"threads":1,"scale":%s,"ops":%d,' +
    '"seconds":%s,"ns_per_op":%s,"mem_kind":"%s","peak_mem":%d,"base_mem":%d,"end_mem":%d,' +
    '"peak_live":%d,"affinity":%d,"check":%d}',
    [W.Name, KindName(AKind), SizeOf(Pointer) * 8, FloatToStr(AScale, F), R.Ops,
     FormatFloat('0.000000000', Seconds, F), FormatFloat('0.0000', NsPerOp, F),
     BoolToStr(UnderWine, 'peak-working-set', 'peak-commit'), Int64(Peak), Int64(R.BaseMem),
     Int64(Current), Int64(R.PeakLive), Int64(Mask), R.Check]));
  Flush(Output);
end;

procedure Usage;
begin
  WriteLn(StdErr, 'usage: fastmm_pascal_bench --workload NAME|all --alloc fastmmc|fpcheap|entries|adapters|cexport [--scale F]');
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
        WriteLn(CWorkloads[I].Name, #9'1'#9, CWorkloads[I].Description);
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
  else
    Usage;
  if (WName = '') or not (Scale > 0) then
    Usage;
  if Kind <> akFpcHeap then
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
    if (H = FastMMC_DLLHandle) <> (Kind <> akAdapters) then
    begin
      WriteLn(StdErr, 'fastmm_pascal_bench: the installed ReAllocMem is not the one --alloc ', AName, ' measures');
      Halt(2);
    end;
  end;
  for I := Low(CWorkloads) to High(CWorkloads) do
    if ((WName = 'all') or (WName = CWorkloads[I].Name)) and ((Kind in [akFastMMC, akFpcHeap, akAdapters]) or CWorkloads[I].Raw) then
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
