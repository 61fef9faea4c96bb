{ SPDX-License-Identifier: MIT }
{ What Delphi's System unit gives a memory manager, for Free Pascal: TMemoryManagerEx and
  GetMemoryManager / SetMemoryManager for it, so that the Delphi branch of FastMMC.pas
  (compiled with -dFASTMMC_DELPHI_BRANCH) can be compiled and run by Free Pascal. Test only.

  It is compiled on its own first and loaded into the program's compilation with -Fa (a unit
  "used" by every unit before its uses clause): compiled in the same fpc call as the program,
  Free Pascal 3.2.2 stops with internal error 2015022301.

  The record set last is installed behind an adapter in Free Pascal's TMemoryManager that calls
  it the way Delphi's System unit does (System.pas, _GetMem / _FreeMem / _ReallocMem /
  AllocMem):
    - GetMem and AllocMem are not called for a size of 0 or less (the result is nil), and a nil
      result is run-time error reOutOfMemory (203: EOutOfMemory with SysUtils);
    - FreeMem is not called for nil, and a non-zero result is reInvalidPtr (204:
      EInvalidPointer with SysUtils);
    - ReallocMem of nil is GetMem, to size 0 is FreeMem, and a nil result is reOutOfMemory.
  Delphi's record has no MemSize: the adapter answers 0, so Free Pascal's string routines always
  resize through ReallocMem (correct, if slower). Statistics (GetHeapStatus, GetFPCHeapStatus)
  and thread hooks stay Free Pascal's. Until a record is set, GetMemoryManager gives one that
  calls Free Pascal's own heap. }
{$mode delphi}
unit DelphiMemoryManager;

interface

type
  PMemoryManagerEx = ^TMemoryManagerEx;
  TMemoryManagerEx = record
    GetMem: function(Size: NativeInt): Pointer;
    FreeMem: function(P: Pointer): Integer;
    ReallocMem: function(P: Pointer; Size: NativeInt): Pointer;
    AllocMem: function(Size: NativeInt): Pointer;
    RegisterExpectedMemoryLeak: function(P: Pointer): Boolean;
    UnregisterExpectedMemoryLeak: function(P: Pointer): Boolean;
  end;

procedure GetMemoryManager(var MemMgrEx: TMemoryManagerEx); overload;
procedure SetMemoryManager(const MemMgrEx: TMemoryManagerEx); overload;

{How many times the adapter raised each error: for tests that check the error came from the
record's result, as in Delphi.}
var
  InvalidPointerErrors: Integer;
  OutOfMemoryErrors: Integer;
  {How many times Free Pascal's heap, seen as a TMemoryManagerEx (the record in place before
  any other was set: a test's "previous manager"), was asked to free or resize a block.}
  HeapFreeMemCalls: Integer;
  HeapReallocMemCalls: Integer;

implementation

var
  FpcHeap: TMemoryManager;
  Current: TMemoryManagerEx;
  Adapter: TMemoryManager;

procedure RaiseHeapError(ACode: Longint);
begin
  if ACode = 204 then
    Inc(InvalidPointerErrors)
  else
    Inc(OutOfMemoryErrors);
  if Assigned(ErrorProc) then
    ErrorProc(ACode, get_caller_addr(get_frame), get_caller_frame(get_frame));
  RunError(ACode);
end;

{ Free Pascal's heap seen as a TMemoryManagerEx. }

function HeapGetMem(Size: NativeInt): Pointer;
begin
  Result := FpcHeap.GetMem(PtrUInt(Size));
end;

function HeapFreeMem(P: Pointer): Integer;
begin
  Inc(HeapFreeMemCalls);
  FpcHeap.FreeMem(P);
  Result := 0;
end;

function HeapReallocMem(P: Pointer; Size: NativeInt): Pointer;
begin
  Inc(HeapReallocMemCalls);
  Result := FpcHeap.ReAllocMem(P, PtrUInt(Size));
end;

function HeapAllocMem(Size: NativeInt): Pointer;
begin
  Result := FpcHeap.AllocMem(PtrUInt(Size));
end;

function HeapLeak(P: Pointer): Boolean;
begin
  Result := False;
end;

{ The record set last, called as Delphi's System calls it. }

function AdapterGetMem(Size: PtrUInt): Pointer;
begin
  Result := nil;
  if NativeInt(Size) <= 0 then
    Exit;
  Result := Current.GetMem(NativeInt(Size));
  if Result = nil then
    RaiseHeapError(203);
end;

function AdapterFreeMem(P: Pointer): PtrUInt;
begin
  Result := 0;
  if (P <> nil) and (Current.FreeMem(P) <> 0) then
    RaiseHeapError(204);
end;

function AdapterFreeMemSize(P: Pointer; Size: PtrUInt): PtrUInt;
begin
  Result := AdapterFreeMem(P);
end;

function AdapterAllocMem(Size: PtrUInt): Pointer;
begin
  Result := nil;
  if NativeInt(Size) <= 0 then
    Exit;
  Result := Current.AllocMem(NativeInt(Size));
  if Result = nil then
    RaiseHeapError(203);
end;

function AdapterReAllocMem(var P: Pointer; Size: PtrUInt): Pointer;
var
  R: Pointer;
begin
  if P = nil then
    P := AdapterGetMem(Size)
  else if NativeInt(Size) <= 0 then
  begin
    AdapterFreeMem(P);
    P := nil;
  end
  else
  begin
    R := Current.ReallocMem(P, NativeInt(Size));
    if R = nil then
      RaiseHeapError(203);
    P := R;
  end;
  Result := P;
end;

function AdapterMemSize(P: Pointer): PtrUInt;
begin
  Result := 0;
end;

procedure GetMemoryManager(var MemMgrEx: TMemoryManagerEx);
begin
  MemMgrEx := Current;
end;

procedure SetMemoryManager(const MemMgrEx: TMemoryManagerEx);
begin
  Current := MemMgrEx;
  System.SetMemoryManager(Adapter);
end;

initialization
  System.GetMemoryManager(FpcHeap);
  Current.GetMem := HeapGetMem;
  Current.FreeMem := HeapFreeMem;
  Current.ReallocMem := HeapReallocMem;
  Current.AllocMem := HeapAllocMem;
  Current.RegisterExpectedMemoryLeak := HeapLeak;
  Current.UnregisterExpectedMemoryLeak := HeapLeak;
  Adapter := FpcHeap;
  Adapter.GetMem := AdapterGetMem;
  Adapter.FreeMem := AdapterFreeMem;
  Adapter.FreeMemSize := AdapterFreeMemSize;
  Adapter.AllocMem := AdapterAllocMem;
  Adapter.ReAllocMem := AdapterReAllocMem;
  Adapter.MemSize := AdapterMemSize;
end.
