{ SPDX-License-Identifier: MIT }
{ For fastmm_pascal_bench: the few Windows calls the program makes, kernel32's on Windows and on
  Linux done with the C library under the same names, so the program has one body. On Linux: The clock is CLOCK_MONOTONIC in
  nanoseconds; the process's memory is its resident set and its peak (VmRSS, VmHWM of
  /proc/self/status), in WorkingSetSize and PeakWorkingSetSize; the library is libfastmmc.so
  (dlopen, dlsym, dladdr), or with FASTMMC_STATIC the program's own linked copy. }
{$mode delphi}
unit BenchOS;

interface

type
  TProcessMemoryCounters = record
    cb: Cardinal;
    PageFaultCount: Cardinal;
    PeakWorkingSetSize, WorkingSetSize, QuotaPeakPagedPoolUsage, QuotaPagedPoolUsage,
      QuotaPeakNonPagedPoolUsage, QuotaNonPagedPoolUsage, PagefileUsage, PeakPagefileUsage: NativeUInt;
  end;

{$ifdef MSWINDOWS}
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
{$else}
function QueryPerformanceCounter(var ACount: Int64): LongBool;
function QueryPerformanceFrequency(var AFrequency: Int64): LongBool;
function GetCurrentProcess: NativeUInt;
function GetProcessAffinityMask(AProcess: NativeUInt; var AProcessMask, ASystemMask: NativeUInt): LongBool;
function K32GetProcessMemoryInfo(AProcess: NativeUInt; var ACounters: TProcessMemoryCounters; ASize: Cardinal): LongBool;
{0: there is no ntdll.dll (so no Wine) on Linux.}
function GetModuleHandleA(AName: PAnsiChar): NativeUInt;
{The library fastmm-c's unit loads (beside the program), or with FASTMMC_STATIC the program.}
function LoadLibraryA(AName: PAnsiChar): NativeUInt;
{AModule 0 or the program linked with FASTMMC_STATIC: the linked library's exports.}
function GetProcAddress(AModule: NativeUInt; AName: PAnsiChar): Pointer;
{AModule := the loaded library's handle when AAddress is code of libfastmmc.so, else 0 (always 0,
and False, with FASTMMC_STATIC).}
function GetModuleHandleExW(AFlags: Cardinal; AAddress: Pointer; out AModule: NativeUInt): LongBool;
{$endif}

implementation

{$ifndef MSWINDOWS}

uses
  FastMMC;

type
  TTimeSpec = record
    Seconds, Nanoseconds: Int64;
  end;
  TDlInfo = record
    FileName: PAnsiChar;
    Base: Pointer;
    SymbolName: PAnsiChar;
    SymbolAddress: Pointer;
  end;

function clock_gettime(AClock: Longint; var ATime: TTimeSpec): Longint; cdecl; external 'c';
function sched_getaffinity(APid: Longint; ASize: NativeUInt; AMask: Pointer): Longint; cdecl; external 'c';
function open(APath: PAnsiChar; AFlags: Longint): Longint; cdecl; external 'c';
function read(AFd: Longint; ABuffer: Pointer; ACount: NativeUInt): NativeInt; cdecl; external 'c';
function close(AFd: Longint): Longint; cdecl; external 'c';
function dlopen(AName: PAnsiChar; AFlags: Longint): Pointer; cdecl; external 'c';
function dlsym(AHandle: Pointer; AName: PAnsiChar): Pointer; cdecl; external 'c';
function dladdr(AAddress: Pointer; var AInfo: TDlInfo): Longint; cdecl; external 'c';
function readlink(APath, ABuffer: PAnsiChar; ASize: NativeUInt): NativeInt; cdecl; external 'c';

{$ifdef FASTMMC_STATIC}
procedure Linked_fastmm_getmem; cdecl; external name 'fastmm_getmem';
procedure Linked_fastmm_freemem; cdecl; external name 'fastmm_freemem';
procedure Linked_fastmm_reallocmem; cdecl; external name 'fastmm_reallocmem';
procedure Linked_fastmm_usable_size; cdecl; external name 'fastmm_usable_size';
procedure Linked_fastmm_get_fpc_memory_manager; cdecl; external name 'fastmm_get_fpc_memory_manager';
{$endif}

function QueryPerformanceCounter(var ACount: Int64): LongBool;
var
  T: TTimeSpec;
begin
  clock_gettime(1 {CLOCK_MONOTONIC}, T);
  ACount := T.Seconds * 1000000000 + T.Nanoseconds;
  Result := True;
end;

function QueryPerformanceFrequency(var AFrequency: Int64): LongBool;
begin
  AFrequency := 1000000000;
  Result := True;
end;

function GetCurrentProcess: NativeUInt;
begin
  Result := 0;
end;

function GetProcessAffinityMask(AProcess: NativeUInt; var AProcessMask, ASystemMask: NativeUInt): LongBool;
var
  Mask: array[0..15] of NativeUInt;
begin
  FillChar(Mask, SizeOf(Mask), 0);
  Result := sched_getaffinity(0, SizeOf(Mask), @Mask[0]) = 0;
  AProcessMask := Mask[0];
  ASystemMask := Mask[0];
end;

{The value in kB of the line AKey ("VmRSS:") of the text, in bytes; 0 when it is not there.}
function StatusValue(const AText: array of AnsiChar; ALength: Integer; const AKey: ShortString): NativeUInt;
var
  I, K: Integer;
begin
  Result := 0;
  for I := 0 to ALength - Length(AKey) - 1 do
  begin
    K := 1;
    while (K <= Length(AKey)) and (AText[I + K - 1] = AKey[K]) do
      Inc(K);
    if K > Length(AKey) then
    begin
      K := I + Length(AKey);
      while (K < ALength) and ((AText[K] = ' ') or (AText[K] = #9)) do
        Inc(K);
      while (K < ALength) and (AText[K] >= '0') and (AText[K] <= '9') do
      begin
        Result := Result * 10 + NativeUInt(Ord(AText[K]) - Ord('0'));
        Inc(K);
      end;
      Result := Result * 1024;
      Exit;
    end;
  end;
end;

function K32GetProcessMemoryInfo(AProcess: NativeUInt; var ACounters: TProcessMemoryCounters; ASize: Cardinal): LongBool;
var
  Text: array[0..8191] of AnsiChar;
  Fd: Longint;
  N: NativeInt;
begin
  Result := False;
  Fd := open('/proc/self/status', 0);
  if Fd < 0 then
    Exit;
  N := read(Fd, @Text[0], SizeOf(Text));
  close(Fd);
  if N <= 0 then
    Exit;
  ACounters.WorkingSetSize := StatusValue(Text, N, 'VmRSS:');
  ACounters.PeakWorkingSetSize := StatusValue(Text, N, 'VmHWM:');
  ACounters.PagefileUsage := ACounters.WorkingSetSize;
  ACounters.PeakPagefileUsage := ACounters.PeakWorkingSetSize;
  Result := ACounters.PeakWorkingSetSize > 0;
end;

function GetModuleHandleA(AName: PAnsiChar): NativeUInt;
begin
  Result := 0;
end;

function LoadLibraryA(AName: PAnsiChar): NativeUInt;
{$ifdef FASTMMC_STATIC}
begin
  Result := 1;
end;
{$else}
var
  Path: array[0..4095] of AnsiChar;
  N: NativeInt;
  I: Integer;
begin
  {Beside the program, as FastMMC loads it.}
  N := readlink('/proc/self/exe', @Path[0], High(Path) - 64);
  while (N > 0) and (Path[N - 1] <> '/') do
    Dec(N);
  if N < 0 then
    N := 0;
  I := 0;
  while AName[I] <> #0 do
  begin
    Path[N] := AName[I];
    Inc(N);
    Inc(I);
  end;
  Path[N] := #0;
  Result := NativeUInt(dlopen(@Path[0], 2 {RTLD_NOW}));
end;
{$endif}

function GetProcAddress(AModule: NativeUInt; AName: PAnsiChar): Pointer;
{$ifdef FASTMMC_STATIC}
var
  S: ShortString;
begin
  S := AName;
  if S = 'fastmm_getmem' then
    Result := @Linked_fastmm_getmem
  else if S = 'fastmm_freemem' then
    Result := @Linked_fastmm_freemem
  else if S = 'fastmm_reallocmem' then
    Result := @Linked_fastmm_reallocmem
  else if S = 'fastmm_usable_size' then
    Result := @Linked_fastmm_usable_size
  else if S = 'fastmm_get_fpc_memory_manager' then
    Result := @Linked_fastmm_get_fpc_memory_manager
  else
    Result := nil;
end;
{$else}
begin
  Result := dlsym(Pointer(AModule), AName);
end;
{$endif}

function GetModuleHandleExW(AFlags: Cardinal; AAddress: Pointer; out AModule: NativeUInt): LongBool;
{$ifdef FASTMMC_STATIC}
begin
  {One module: nothing tells the library's code from the program's.}
  AModule := 0;
  Result := False;
end;
{$else}
var
  Code, Lib: TDlInfo;
begin
  AModule := 0;
  if (dladdr(AAddress, Code) <> 0) and
    (dladdr(dlsym(Pointer(FastMMC_DLLHandle), 'fastmm_check_heap'), Lib) <> 0) and (Code.Base = Lib.Base) then
    AModule := FastMMC_DLLHandle;
  Result := True;
end;
{$endif}

{$endif}

end.
