{ SPDX-License-Identifier: MIT }
{ Checks that an invalid operation raised EInvalidPointer, shared by the tests that make one
  (test_debug, test_delphi_branch, test_fastmm5, test_records). }
{$mode delphi}
unit RaiseChecks;

interface

type
  TBadCall = (bcFreeMem, bcReallocMem, bcFreeMemSize, bcReallocMemZero);

  {Makes the call on Q: through the RTL (RaisesInvalidPointer) or a record's entries.}
  TBadCallMaker = procedure(ACall: TBadCall; var Q: Pointer);

{True when the call (FreeMem(P), ReallocMem(P, 100), FreeMem(P, 100), ReallocMem(P, 0)) raised
EInvalidPointer and left the pointer variable as it was.}
function RaisesInvalidPointer(ACall: TBadCall; P: Pointer): Boolean;
{The same, the call made by AMake.}
function RaisesInvalidPointerBy(AMake: TBadCallMaker; ACall: TBadCall; P: Pointer): Boolean;
{True when FastMM_ScanDebugBlocksForCorruption raised EInvalidPointer, as FastMM5's does on
damage (after reporting it).}
function ScanRaises: Boolean;

implementation

uses
  FastMMC, SysUtils;

function RaisesInvalidPointerBy(AMake: TBadCallMaker; ACall: TBadCall; P: Pointer): Boolean;
var
  Q: Pointer;
begin
  Result := False;
  Q := P;
  try
    AMake(ACall, Q);
  except
    on EInvalidPointer do
      Result := Q = P;
  end;
end;

procedure MakeRtlCall(ACall: TBadCall; var Q: Pointer);
begin
  case ACall of
    bcFreeMem: FreeMem(Q);
    bcReallocMem: ReallocMem(Q, 100);
    bcFreeMemSize: FreeMem(Q, 100);
  else
    ReallocMem(Q, 0);
  end;
end;

function RaisesInvalidPointer(ACall: TBadCall; P: Pointer): Boolean;
begin
  Result := RaisesInvalidPointerBy(MakeRtlCall, ACall, P);
end;

function ScanRaises: Boolean;
begin
  Result := False;
  try
    FastMM_ScanDebugBlocksForCorruption;
  except
    on EInvalidPointer do
      Result := True;
  end;
end;

end.
