{ SPDX-License-Identifier: MIT }
{ For test_sharemem: what Delphi's ShareMem unit does, in Free Pascal. It imports borlndmm.dll by
  the names ShareMem imports, declared with Delphi's default (register) convention, which is
  also Free Pascal's on i386, and installs them as the memory manager. A call with the wrong
  convention would crash or return garbage, so this checks the drop-in's ABI from real Pascal
  code on Win32 and Win64.

  Free Pascal's TMemoryManager is not Delphi's: small adapters map it onto the Delphi-shaped
  entries, and blocks Free Pascal's heap handed out before the install go back to it (the DLL
  refuses them). }
{$mode delphi}
unit BorlndmmShareMem;

interface

const
  DelphiMM = 'borlndmm.dll';

type
  {Delphi's System.THeapStatus (NativeUInt fields; Free Pascal's has Cardinal ones).}
  TDelphiHeapStatus = record
    TotalAddrSpace, TotalUncommitted, TotalCommitted, TotalAllocated, TotalFree, FreeSmall,
      FreeBig, Unused, Overhead: NativeUInt;
    HeapErrorCode: Cardinal;
  end;

function SysGetMem(Size: NativeInt): Pointer; external DelphiMM name '@Borlndmm@SysGetMem$qqri';
function SysFreeMem(P: Pointer): Integer; external DelphiMM name '@Borlndmm@SysFreeMem$qqrpv';
function SysReallocMem(P: Pointer; Size: NativeInt): Pointer; external DelphiMM name '@Borlndmm@SysReallocMem$qqrpvi';
function SysAllocMem(Size: NativeInt): Pointer; external DelphiMM name '@Borlndmm@SysAllocMem$qqri';
function SysRegisterExpectedMemoryLeak(P: Pointer): Boolean; external DelphiMM name '@Borlndmm@SysRegisterExpectedMemoryLeak$qqrpi';
function SysUnregisterExpectedMemoryLeak(P: Pointer): Boolean; external DelphiMM name '@Borlndmm@SysUnregisterExpectedMemoryLeak$qqrpi';
function HeapAddRef: Integer; external DelphiMM name '@Borlndmm@HeapAddRef$qqrv';
function HeapRelease: Integer; external DelphiMM name '@Borlndmm@HeapRelease$qqrv';
function GetHeapStatus: TDelphiHeapStatus; external DelphiMM name 'GetHeapStatus';
function GetAllocMemCount: Integer; external DelphiMM name 'GetAllocMemCount';
function GetAllocMemSize: Integer; external DelphiMM name 'GetAllocMemSize';
procedure DumpBlocks; external DelphiMM name 'DumpBlocks';
function GetMemory(Size: NativeInt): Pointer; cdecl; external DelphiMM name 'GetMemory';
function FreeMemory(P: Pointer): Integer; cdecl; external DelphiMM name 'FreeMemory';
function ReallocMemory(P: Pointer; Size: NativeInt): Pointer; cdecl; external DelphiMM name 'ReallocMemory';

var
  {What HeapAddRef returned at the install.}
  InstallRefCount: Integer;

implementation

var
  Previous, Shared: TMemoryManager;

function ShareGetMem(Size: PtrUInt): Pointer;
begin
  Result := SysGetMem(Size);
  if Result = nil then
    RunError(203);
end;

function ShareFreeMem(P: Pointer): PtrUInt;
begin
  if SysFreeMem(P) <> 0 then
    Previous.FreeMem(P);
  Result := 0;
end;

function ShareFreeMemSize(P: Pointer; Size: PtrUInt): PtrUInt;
begin
  Result := ShareFreeMem(P);
end;

function ShareAllocMem(Size: PtrUInt): Pointer;
begin
  Result := SysAllocMem(Size);
  if Result = nil then
    RunError(203);
end;

function ShareReAllocMem(var P: Pointer; Size: PtrUInt): Pointer;
var
  R: Pointer;
begin
  if Size = 0 then
  begin
    ShareFreeMem(P);
    P := nil;
  end
  else if P = nil then
    P := ShareGetMem(Size)
  else
  begin
    R := SysReallocMem(P, Size);
    if R = nil then
      {Not borlndmm's: Free Pascal's heap resizes its own block.}
      Previous.ReAllocMem(P, Size)
    else
      P := R;
  end;
  Result := P;
end;

initialization
  InstallRefCount := HeapAddRef;
  GetMemoryManager(Previous);
  Shared := Previous;
  Shared.GetMem := ShareGetMem;
  Shared.FreeMem := ShareFreeMem;
  Shared.FreeMemSize := ShareFreeMemSize;
  Shared.AllocMem := ShareAllocMem;
  Shared.ReAllocMem := ShareReAllocMem;
  SetMemoryManager(Shared);

finalization
  HeapRelease;
end.
