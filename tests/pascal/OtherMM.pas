{ SPDX-License-Identifier: MIT }
{ For test_othermm: another memory manager, installed before FastMMC (a counting wrapper around
  Free Pascal's own heap). }
{$mode delphi}
unit OtherMM;

interface

var
  OtherGetMemCalls: Longint;

implementation

var
  Previous, Mine: TMemoryManager;

function CountingGetMem(Size: PtrUInt): Pointer;
begin
  InterlockedIncrement(OtherGetMemCalls);
  Result := Previous.GetMem(Size);
end;

initialization
  GetMemoryManager(Previous);
  Mine := Previous;
  Mine.GetMem := CountingGetMem;
  SetMemoryManager(Mine);

finalization
  SetMemoryManager(Previous);
end.
