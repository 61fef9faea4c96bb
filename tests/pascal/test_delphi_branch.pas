{ SPDX-License-Identifier: MIT }
{ The Delphi branch of FastMMC.pas (Delphi's TMemoryManagerEx), compiled by Free Pascal with
  -dFASTMMC_DELPHI_BRANCH: the unit then uses DelphiMemoryManager (tests/pascal/delphi_rtl),
  which gives Free Pascal Delphi's TMemoryManagerEx and calls the record installed as Delphi's
  System unit does (GetMem's nil result is EOutOfMemory, FreeMem's non-zero result is
  EInvalidPointer). What runs here is the code a Delphi program runs:
    - the record installed holds the DLL's own GetMem and AllocMem, and the DLL's FreeMem and
      ReallocMem bound to the previous manager (fastmm_get_memory_manager_with_previous: code
      of the DLL, not the plain record's entries, not the unit's adapters); blocks come from
      the DLL and keep their data through ReallocMem;
    - an invalid FreeMem (a double free, an interior pointer) makes the record's FreeMem return
      non-zero, which System turns into EInvalidPointer; a ReallocMem of a freed block or of
      an interior pointer raises it from the DLL's slow path (through the unit's heap error
      callback); none of them reaches the previous manager;
    - blocks of the previous manager (Free Pascal's heap, seen as a TMemoryManagerEx) go back to
      it, from the DLL's slow path;
    - FastMM_EnterDebugMode returns False and leaves the mode off while another memory manager
      is installed over the unit's (RecordStillOurs on a TMemoryManagerEx);
    - FastMM_Finalize gives GetMem back to the previous manager and keeps freeing the DLL's
      blocks. }
program test_delphi_branch;

uses
  FastMMC, DelphiMemoryManager, SysUtils, Classes, FmmTest, RaiseChecks;

function GetProcAddress(AModule: NativeUInt; AName: PAnsiChar): Pointer; stdcall; external 'kernel32.dll';
function GetModuleHandleExW(AFlags: Cardinal; AAddress: Pointer; out AModule: NativeUInt): LongBool;
  stdcall; external 'kernel32.dll';

{Is this code address inside the DLL's image? (GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS and
UNCHANGED_REFCOUNT)}
function InDll(ACode: Pointer): Boolean;
var
  M: NativeUInt;
begin
  M := 0;
  Result := GetModuleHandleExW(6, ACode, M) and (M = FastMMC_DLLHandle);
end;

const
  CSizes: array[0..2] of Integer = (2000, 50000, 500000);

type
  TDllMemoryManagerEx = record
    GetMem, FreeMem, ReallocMem, AllocMem, RegisterLeak, UnregisterLeak: Pointer;
  end;
  TGetDllMemoryManager = procedure(var AManager: TDllMemoryManagerEx); cdecl;

var
  {A memory manager installed over FastMMC's, as another library might: it counts and passes on.}
  Underneath: TMemoryManagerEx;
  OtherGetMemCalls: Integer;

function OtherGetMem(Size: NativeInt): Pointer;
begin
  Inc(OtherGetMemCalls);
  Result := Underneath.GetMem(Size);
end;

procedure TestRecord;
var
  MM: TMemoryManagerEx;
  Dll: TDllMemoryManagerEx;
  GetDll: TGetDllMemoryManager;
begin
  GetMemoryManager(MM);
  GetDll := TGetDllMemoryManager(GetProcAddress(FastMMC_DLLHandle, 'fastmm_get_memory_manager'));
  Check(Assigned(GetDll), 'the DLL exports fastmm_get_memory_manager');
  if not Assigned(GetDll) then
    Exit;
  GetDll(Dll);
  Check(@MM.GetMem = Dll.GetMem, 'GetMem is the DLL''s own entry point');
  Check(@MM.AllocMem = Dll.AllocMem, 'AllocMem is the DLL''s own entry point');
  Check(InDll(@MM.FreeMem) and (@MM.FreeMem <> Dll.FreeMem),
    'FreeMem is the DLL''s bound entry point (it passes foreign blocks on itself)');
  Check(InDll(@MM.ReallocMem) and (@MM.ReallocMem <> Dll.ReallocMem),
    'ReallocMem is the DLL''s bound entry point');
end;

procedure TestBlocks;
var
  P: PByte;
  I: Integer;
  Ok: Boolean;
  L: TStringList;
  S: string;
  B0: NativeUInt;
begin
  GetMem(P, 1000);
  Check(FastMMC_OwnsBlock(P), 'GetMem through the record: a block of the DLL');
  for I := 0 to 999 do
    P[I] := Byte(I * 7);
  ReallocMem(P, 200000);
  Ok := FastMMC_OwnsBlock(P);
  for I := 0 to 999 do
    Ok := Ok and (P[I] = Byte(I * 7));
  Check(Ok, 'ReallocMem up to 200000 bytes: the DLL''s block, the 1000 bytes kept');
  ReallocMem(P, 10);
  Ok := FastMMC_OwnsBlock(P);
  for I := 0 to 9 do
    Ok := Ok and (P[I] = Byte(I * 7));
  Check(Ok, 'ReallocMem down to 10 bytes: data kept');
  FreeMem(P);
  Check(not FastMMC_OwnsBlock(P), 'FreeMem gave the block back');

  P := AllocMem(5000);
  Ok := FastMMC_OwnsBlock(P);
  for I := 0 to 4999 do
    Ok := Ok and (P[I] = 0);
  Check(Ok, 'AllocMem through the record: a zeroed block of the DLL');
  FreeMem(P);

  B0 := DllBlocks;
  L := TStringList.Create;
  for I := 0 to 499 do
    L.Add('line ' + IntToStr(I));
  L.Sort;
  S := L.CommaText;
  Check((L.Count = 500) and (Pos('line 499', S) > 0) and FastMMC_OwnsBlock(Pointer(L)),
    'the RTL (strings, TStringList) works on the DLL''s blocks');
  Check(DllBlocks >= B0 + 500, 'the DLL holds the 500 strings');
  L.Free;
end;

procedure TestInvalidPointers;
var
  P: PByte;
  Raised0, Previous0: Integer;
  Size, I: Integer;
begin
  Previous0 := DelphiMemoryManager.HeapFreeMemCalls + DelphiMemoryManager.HeapReallocMemCalls;
  for I := Low(CSizes) to High(CSizes) do
  begin
    Size := CSizes[I];
    GetMem(P, Size);
    FreeMem(P);
    Raised0 := DelphiMemoryManager.InvalidPointerErrors;
    Check(RaisesInvalidPointer(bcFreeMem, P), 'a second FreeMem of ' + IntToStr(Size) + ' bytes raises EInvalidPointer');
    CheckEquals(Raised0 + 1, DelphiMemoryManager.InvalidPointerErrors,
      'it came from the record''s FreeMem result, as in Delphi (' + IntToStr(Size) + ' bytes)');
    Check(RaisesInvalidPointer(bcReallocMem, P), 'a ReallocMem of a freed ' + IntToStr(Size) + '-byte block raises EInvalidPointer');
  end;
  GetMem(P, 3000);
  Check(RaisesInvalidPointer(bcFreeMem, P + 16), 'FreeMem of a pointer inside a block raises EInvalidPointer');
  Raised0 := DelphiMemoryManager.InvalidPointerErrors;
  Check(RaisesInvalidPointer(bcReallocMem, P + 16), 'ReallocMem of a pointer inside a block raises EInvalidPointer');
  CheckEquals(Raised0, DelphiMemoryManager.InvalidPointerErrors,
    'raised by the DLL (through the unit''s heap error), not made of a nil result');
  Check(FastMMC_OwnsBlock(P), 'the block itself is untouched');
  FreeMem(P);
  CheckEquals(Previous0, DelphiMemoryManager.HeapFreeMemCalls + DelphiMemoryManager.HeapReallocMemCalls,
    'no bad pointer of the DLL''s reached the previous manager');
  CheckEquals(0, FastMMC_CheckHeap, 'the DLL''s heap is consistent after the refused pointers');
end;

procedure TestPreviousManager;
var
  Previous: TMemoryManagerEx;
  P: PByte;
  Raised0, Calls0: Integer;
begin
  FastMMC_GetPreviousMemoryManager(Previous);
  P := Previous.GetMem(300);
  P[0] := 42;
  P[299] := 43;
  Check(not FastMMC_OwnsBlock(P), 'the previous manager''s block is not the DLL''s');
  Calls0 := DelphiMemoryManager.HeapReallocMemCalls;
  ReallocMem(P, 4000);
  Check(not FastMMC_OwnsBlock(P) and (P[0] = 42) and (P[299] = 43), 'ReallocMem gave it to the previous manager, data kept');
  CheckEquals(Calls0 + 1, DelphiMemoryManager.HeapReallocMemCalls, 'one ReallocMem call reached it');
  Raised0 := DelphiMemoryManager.InvalidPointerErrors;
  Calls0 := DelphiMemoryManager.HeapFreeMemCalls;
  FreeMem(P);
  CheckEquals(Raised0, DelphiMemoryManager.InvalidPointerErrors, 'FreeMem gave it to the previous manager, no error');
  CheckEquals(Calls0 + 1, DelphiMemoryManager.HeapFreeMemCalls, 'one FreeMem call reached it');
end;

procedure TestOtherManagerInstalled;
var
  Other: TMemoryManagerEx;
  P: Pointer;
begin
  GetMemoryManager(Underneath);
  Other := Underneath;
  Other.GetMem := OtherGetMem;
  SetMemoryManager(Other);
  GetMem(P, 64);
  FreeMem(P);
  Check(OtherGetMemCalls > 0, 'the other memory manager is in use');
  Check(not FastMM_EnterDebugMode, 'FastMM_EnterDebugMode: False while another memory manager is installed');
  Check(not FastMM_DebugModeActive, 'debug mode stays off');
  Check(not FastMM_BeginEraseAllocatedBlockContent, 'FastMM_BeginEraseAllocatedBlockContent: False too');
  Check(not FastMM_EraseAllocatedBlockContentActive, 'the erase mode stays off');
  SetMemoryManager(Underneath);
  {The counters moved all the same (FastMM5): these bring them back to 0, with nothing to switch.}
  Check(FastMM_ExitDebugMode and FastMM_EndEraseAllocatedBlockContent, 'Exit/End after the failed Enter/Begin');
  Check(FastMM_EnterDebugMode and FastMM_DebugModeActive, 'FastMMC''s record back: FastMM_EnterDebugMode switches');
  Check(FastMM_ExitDebugMode and not FastMM_DebugModeActive, 'FastMM_ExitDebugMode switches back');
end;

procedure TestFinalize;
var
  MM, Previous: TMemoryManagerEx;
  Kept, Fresh: Pointer;
begin
  GetMem(Kept, 700);
  Check(FastMM_Finalize, 'FastMM_Finalize');
  GetMemoryManager(MM);
  FastMMC_GetPreviousMemoryManager(Previous);
  Check(@MM.GetMem = @Previous.GetMem, 'after FastMM_Finalize GetMem is the previous manager''s');
  GetMem(Fresh, 700);
  Check(not FastMMC_OwnsBlock(Fresh), 'new blocks come from the previous manager');
  FreeMem(Fresh);
  FreeMem(Kept);
  Check(not FastMMC_OwnsBlock(Kept), 'a block of the DLL is still freed by the DLL');
end;

begin
  Check(FastMM_GetInstallationState = mmisInstalled, 'installed through the Delphi branch');
  TestRecord;
  TestBlocks;
  TestInvalidPointers;
  TestPreviousManager;
  TestOtherManagerInstalled;
  CheckEquals(0, FastMMC_CheckHeap, 'the DLL''s heap is consistent');
  TestFinalize;
  Halt(Finish('test_delphi_branch'));
end.
