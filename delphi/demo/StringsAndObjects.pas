{ SPDX-License-Identifier: MIT }
{ The Pascal demo: a string- and object-heavy workload, built twice from this one source:

    demo_fastmmc.exe   FastMMC first in the uses clause (compiled with -dUSE_FASTMMC): the
                       RTL's memory comes from fastmmc32.dll / fastmmc64.dll
    demo_fpcheap.exe   Free Pascal's own heap

  Each run prints one line for delphi/demo/compare.sh, which runs the two in turns and prints
  the comparison table:
    RESULT manager=<name> strings_ms=<t> objects_ms=<t> threads_ms=<t> start_ws_kb=<k>
           peak_ws_kb=<k> private_exit_kb=<k> private_released_kb=<k> check=<n>
  The memory figures come from GetProcessMemoryInfo: the working set when the main program
  starts (the RTL, the DLL and Wine's own already loaded), PeakWorkingSetSize at the end (the
  process's peak resident memory: a real peak, which Wine reads from Linux's VmHWM), and
  PagefileUsage at the end (private memory still in use at exit; Wine reports the resident
  anonymous memory there, and gives the same figure as PeakPagefileUsage, so that field is no
  peak under Wine). With FastMMC, private_released_kb is PagefileUsage again after
  FastMMC_ReleaseFreeMemory gave back what the DLL keeps for reuse (the large-block cache, the
  spare spans), which its idle thread would give back by itself after an idle spell; Free
  Pascal's heap has no such call, so its line repeats private_exit_kb there.

  The phases:
    strings  300000 short words made by concatenation and IntToStr, strings grown a character
             at a time, copies made unique, a 20000-line TStringList sorted
    objects  200000 small objects with string fields, half of them freed and 100000 made
             again, 20000 customers with growing lists of orders
    threads  both phases, a fifth of the size, 4 times over on each of 4 threads at once }
program StringsAndObjects;

{$mode delphi}
{$H+}

uses
{$ifdef USE_FASTMMC}
  FastMMC,
{$endif}
  SysUtils, Classes;

type
  TPoint3 = class
    X, Y, Z: Double;
    Name: string;
  end;

  TCustomer = class
    Id: Integer;
    FirstName, LastName, Email: string;
    Orders: TList;
    constructor Create(AId: Integer);
    destructor Destroy; override;
  end;

  TOrder = class
    Number: Integer;
    Item: string;
    Amount: Currency;
  end;

  TProcessMemoryCounters = record
    cb: Cardinal;
    PageFaultCount: Cardinal;
    PeakWorkingSetSize, WorkingSetSize, QuotaPeakPagedPoolUsage, QuotaPagedPoolUsage,
      QuotaPeakNonPagedPoolUsage, QuotaNonPagedPoolUsage, PagefileUsage, PeakPagefileUsage: NativeUInt;
  end;

function QueryPerformanceCounter(var ACount: Int64): LongBool; stdcall; external 'kernel32.dll';
function QueryPerformanceFrequency(var AFrequency: Int64): LongBool; stdcall; external 'kernel32.dll';
function GetCurrentProcess: NativeUInt; stdcall; external 'kernel32.dll';
function K32GetProcessMemoryInfo(AProcess: NativeUInt; var ACounters: TProcessMemoryCounters;
  ASize: Cardinal): LongBool; stdcall; external 'kernel32.dll';

constructor TCustomer.Create(AId: Integer);
begin
  inherited Create;
  Id := AId;
  FirstName := 'First' + IntToStr(AId mod 997);
  LastName := 'Last' + IntToStr(AId);
  Email := LowerCase(FirstName + '.' + LastName) + '@example.com';
  Orders := TList.Create;
end;

destructor TCustomer.Destroy;
var
  I: Integer;
begin
  for I := 0 to Orders.Count - 1 do
    TOrder(Orders[I]).Free;
  Orders.Free;
  inherited Destroy;
end;

function NowMs: Double;
var
  C, F: Int64;
begin
  QueryPerformanceCounter(C);
  QueryPerformanceFrequency(F);
  Result := C * 1000.0 / F;
end;

{---- The workload ----}

{Strings: short-lived words made by concatenation and conversion, strings grown a character at
a time and cut back, copies made unique, a sorted TStringList.}
function StringsPhase(AScale: Integer): Int64;
var
  L: TStringList;
  I, J: Integer;
  S, T: string;
  Words: array of string;
begin
  Result := 0;
  SetLength(Words, 1000);
  for I := 0 to 300 * AScale - 1 do
  begin
    S := 'w' + IntToStr(I) + '-' + IntToStr(I * 7 mod 1000);
    T := S + S;
    Words[I mod Length(Words)] := Copy(T, 2, Length(T) - 2);
    Inc(Result, Length(Words[(I * 13) mod Length(Words)]));
  end;
  for I := 0 to 2 * AScale - 1 do
  begin
    S := '';
    for J := 0 to 200 + I mod 300 do
      S := S + Chr(Ord('a') + (I + J) mod 26);
    T := S;
    UniqueString(T);
    T[1] := 'Z';
    Words[I mod Length(Words)] := T;
    Inc(Result, Length(T));
  end;
  L := TStringList.Create;
  try
    L.UseLocale := False; {plain comparisons: the locale's would dominate the time}
    for I := 0 to 20 * AScale - 1 do
      L.Add(Words[(I * 7919) mod Length(Words)] + IntToStr(I));
    L.Sort;
    for I := L.Count - 1 downto L.Count div 2 do
      L[I] := L[I] + '.';
    Inc(Result, L.Count);
  finally
    L.Free;
  end;
end;

{Objects: many small objects of three classes with string fields, half of them freed and made
again in another order, customers with order lists that grow.}
function ObjectsPhase(AScale: Integer): Int64;
var
  Points, Kept, Customers: TList;
  I, J: Integer;
  P: TPoint3;
  C: TCustomer;
  O: TOrder;
begin
  Result := 0;
  Points := TList.Create;
  Kept := TList.Create;
  Customers := TList.Create;
  try
    for I := 0 to 100 * AScale - 1 do
    begin
      P := TPoint3.Create;
      P.X := I;
      P.Name := 'p' + IntToStr(I mod 10007);
      Points.Add(P);
    end;
    {Free every other one; make as many again.}
    for I := 0 to Points.Count - 1 do
      if I mod 2 = 0 then
        TPoint3(Points[I]).Free
      else
        Kept.Add(Points[I]);
    for I := 0 to 50 * AScale - 1 do
    begin
      P := TPoint3.Create;
      P.Y := I;
      P.Name := 'q' + IntToStr(I);
      Kept.Add(P);
    end;
    for I := 0 to 10 * AScale - 1 do
    begin
      C := TCustomer.Create(I);
      for J := 0 to I mod 12 do
      begin
        O := TOrder.Create;
        O.Number := J;
        O.Item := 'item-' + IntToStr(J) + '-' + C.LastName;
        C.Orders.Add(O);
      end;
      Customers.Add(C);
    end;
    Inc(Result, Kept.Count + Customers.Count);
  finally
    for I := 0 to Kept.Count - 1 do
      TPoint3(Kept[I]).Free;
    Kept.Free;
    Points.Free;
    for I := 0 to Customers.Count - 1 do
      TCustomer(Customers[I]).Free;
    Customers.Free;
  end;
end;

type
  TWorker = class(TThread)
  public
    Sum: Int64;
    procedure Execute; override;
  end;

procedure TWorker.Execute;
var
  Round: Integer;
begin
  for Round := 1 to 4 do
  begin
    Inc(Sum, StringsPhase(200));
    Inc(Sum, ObjectsPhase(200));
  end;
end;

function ThreadsPhase: Int64;
var
  W: array[0..3] of TWorker;
  I: Integer;
begin
  Result := 0;
  for I := 0 to High(W) do
    W[I] := TWorker.Create(False);
  for I := 0 to High(W) do
  begin
    W[I].WaitFor;
    Inc(Result, W[I].Sum);
    W[I].Free;
  end;
end;

function MemoryCounters: TProcessMemoryCounters;
begin
  FillChar(Result, SizeOf(Result), 0);
  Result.cb := SizeOf(Result);
  if not K32GetProcessMemoryInfo(GetCurrentProcess, Result, SizeOf(Result)) then
  begin
    WriteLn(ErrOutput, 'demo: GetProcessMemoryInfo failed');
    Halt(1);
  end;
end;

var
  T0, TStrings, TObjects, TThreads: Double;
  Check: Int64;
  Manager: string;
  AtStart, AtEnd, AtReleased: TProcessMemoryCounters;
begin
  AtStart := MemoryCounters;
{$ifdef USE_FASTMMC}
  if not FastMMC_Installed then
  begin
    WriteLn(ErrOutput, 'demo: FastMMC is not installed (is ', CFastMMC_DLLName, ' beside the exe?)');
    Halt(1);
  end;
  Manager := 'fastmm-c';
{$else}
  Manager := 'fpc-heap';
{$endif}
  Check := 0;
  T0 := NowMs;
  Inc(Check, StringsPhase(1000));
  TStrings := NowMs - T0;
  T0 := NowMs;
  Inc(Check, ObjectsPhase(2000));
  TObjects := NowMs - T0;
  T0 := NowMs;
  Inc(Check, ThreadsPhase);
  TThreads := NowMs - T0;
  AtEnd := MemoryCounters;
{$ifdef USE_FASTMMC}
  FastMMC_ReleaseFreeMemory;
  AtReleased := MemoryCounters;
{$else}
  AtReleased := AtEnd;
{$endif}
  WriteLn('RESULT manager=', Manager, ' strings_ms=', TStrings:0:1, ' objects_ms=', TObjects:0:1,
    ' threads_ms=', TThreads:0:1, ' start_ws_kb=', AtStart.WorkingSetSize div 1024,
    ' peak_ws_kb=', AtEnd.PeakWorkingSetSize div 1024,
    ' private_exit_kb=', AtEnd.PagefileUsage div 1024,
    ' private_released_kb=', AtReleased.PagefileUsage div 1024, ' check=', Check);
end.
