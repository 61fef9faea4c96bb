{ SPDX-License-Identifier: MIT }
{ A stand-in for FastMM's debug support library (FastMM_FullDebugMode.dll), for test_fastmm5:
  the three routines FastMM_LoadDebugSupportLibrary looks up, with the support library's
  signatures and Delphi's register convention, returning recognisable values. }
library fake_support;

{GetRawStackTrace: entry i is $1000 + i, from the first entry on.}
procedure GetRawStackTrace(APReturnAddresses: PNativeUInt; AMaxDepth, ASkipFrames: Cardinal);
var
  I: Cardinal;
begin
  for I := 1 to AMaxDepth do
  begin
    APReturnAddresses^ := $1000 + I - 1;
    Inc(APReturnAddresses);
  end;
end;

{GetFrameBasedStackTrace: entry i is $2000 + i.}
procedure GetFrameBasedStackTrace(APReturnAddresses: PNativeUInt; AMaxDepth, ASkipFrames: Cardinal);
var
  I: Cardinal;
begin
  for I := 1 to AMaxDepth do
  begin
    APReturnAddresses^ := $2000 + I - 1;
    Inc(APReturnAddresses);
  end;
end;

{LogStackTrace: 'fake trace of N' for the N non-zero entries; returns the end of the text.}
function LogStackTrace(APReturnAddresses: PNativeUInt; AMaxDepth: Cardinal; APBuffer: PAnsiChar): PAnsiChar;
var
  I, N: Cardinal;
  S: ShortString;
begin
  N := 0;
  for I := 1 to AMaxDepth do
  begin
    if APReturnAddresses^ <> 0 then
      Inc(N);
    Inc(APReturnAddresses);
  end;
  Str(N, S);
  S := 'fake trace of ' + S;
  Move(S[1], APBuffer^, Length(S));
  Result := APBuffer + Length(S);
end;

exports
  GetRawStackTrace,
  GetFrameBasedStackTrace,
  LogStackTrace;

begin
end.
