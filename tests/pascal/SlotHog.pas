{ SPDX-License-Identifier: MIT }
{ For test_records_no_slot: a unit listed BEFORE FastMMC that takes every slot of the DLL's
  Free Pascal records (fastmm_get_fpc_memory_manager binds one per set of bindings, eight in a
  process), as eight other modules of the process would have. FastMMC then finds no slot and
  installs its Pascal adapters: the fallback it keeps for that case and for an older DLL. The
  bindings here are never called (their records are not installed). }
{$mode delphi}
unit SlotHog;

interface

var
  {How many slots this unit took (8 when it took them all).}
  SlotsTaken: Integer;

implementation

function LoadLibraryA(AName: PAnsiChar): NativeUInt; stdcall; external 'kernel32.dll';
function GetProcAddress(AModule: NativeUInt; AName: PAnsiChar): Pointer; stdcall; external 'kernel32.dll';

type
  TBindings = record
    Size: NativeUInt;
    PreviousFreeMem, PreviousReAllocMem, PreviousMemSize, PreviousGetMem, HeapError: Pointer;
    ReturnNilIfGrowHeapFails, AllocateFromLibrary: PBoolean;
  end;
  TEntries = array[0..5] of Pointer;
  TGetFpcMemoryManager = function(var AManager: TEntries; var ABindings: TBindings): Integer; cdecl;

var
  Flags: array[0..15] of Boolean;

procedure Unused;
begin
end;

procedure TakeSlots;
var
  H: NativeUInt;
  Get: TGetFpcMemoryManager;
  B: TBindings;
  E: TEntries;
  I: Integer;
begin
{$ifdef WIN64}
  H := LoadLibraryA('fastmmc64.dll');
{$else}
  H := LoadLibraryA('fastmmc32.dll');
{$endif}
  if H = 0 then
    Exit;
  Get := TGetFpcMemoryManager(GetProcAddress(H, 'fastmm_get_fpc_memory_manager'));
  if not Assigned(Get) then
    Exit;
  for I := 0 to High(Flags) do
  begin
    B.Size := SizeOf(B);
    B.PreviousFreeMem := @Unused;
    B.PreviousReAllocMem := @Unused;
    B.PreviousMemSize := @Unused;
    B.PreviousGetMem := @Unused;
    B.HeapError := @Unused;
    B.ReturnNilIfGrowHeapFails := @Flags[I];
    B.AllocateFromLibrary := @Flags[I];
    if Get(E, B) = 0 then
      Break;
    Inc(SlotsTaken);
  end;
end;

initialization
  TakeSlots;
end.
