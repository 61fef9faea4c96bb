{ SPDX-License-Identifier: MIT }
{ For test_share and test_share_dynamic: a Pascal library that uses FastMMC too. Its strings and
  blocks are allocated and freed on both sides of the library boundary. }
library sharelib;

uses
  FastMMC, SysUtils, Classes;

function Lib_DLLHandle: NativeUInt; cdecl;
begin
  Result := FastMMC_DLLHandle;
end;

function Lib_State: Integer; cdecl;
begin
  Result := Ord(FastMM_GetInstallationState);
end;

{A string made here, freed by the caller.}
procedure Lib_MakeString(var S: AnsiString; ACount: Integer); cdecl;
var
  I: Integer;
begin
  S := '';
  for I := 0 to ACount - 1 do
    S := S + AnsiChar(Ord('a') + I mod 26);
end;

{The caller's string, grown here.}
procedure Lib_AppendString(var S: AnsiString; const ATail: AnsiString); cdecl;
begin
  S := S + ATail;
end;

{The caller's string, freed here.}
procedure Lib_FreeString(var S: AnsiString); cdecl;
begin
  S := '';
end;

function Lib_GetMem(ASize: NativeInt): Pointer; cdecl;
begin
  GetMem(Result, ASize);
end;

procedure Lib_FreeMem(P: Pointer); cdecl;
begin
  FreeMem(P);
end;

function Lib_ReallocMem(P: Pointer; ASize: NativeInt): Pointer; cdecl;
begin
  Result := P;
  ReallocMem(Result, ASize);
end;

function Lib_OwnsBlock(P: Pointer): Boolean; cdecl;
begin
  Result := FastMMC_OwnsBlock(P);
end;

{A TStringList made here; the caller frees it (its code is here, its memory is the DLL's).}
function Lib_MakeList(ACount: Integer): TStringList; cdecl;
var
  I: Integer;
begin
  Result := TStringList.Create;
  for I := 0 to ACount - 1 do
    Result.Add('line ' + IntToStr(I));
end;

exports
  Lib_DLLHandle, Lib_State, Lib_MakeString, Lib_AppendString, Lib_FreeString, Lib_GetMem,
  Lib_FreeMem, Lib_ReallocMem, Lib_OwnsBlock, Lib_MakeList;

end.
