{ SPDX-License-Identifier: MIT }
{ For test_wrong_order (Linux): a unit listed BEFORE FastMMC whose initialization starts a thread,
  the wrong order FastMMC stops a program for. }
{$mode delphi}
unit EarlyThread;

interface

uses
  cthreads;

implementation

function Idle(AParameter: Pointer): PtrInt;
begin
  Result := 0;
end;

initialization
  BeginThread(@Idle);

end.
