{ SPDX-License-Identifier: MIT }
{ The checks test_share (library linked at load time) and test_share_dynamic (LoadLibrary) have
  in common: strings and blocks cross the boundary between the program and sharelib.dll, both
  using FastMMC, in both directions. }
{$mode delphi}
{$H+}
unit ShareChecks;

interface

uses
  Classes;

type
  TLibApi = record
    DLLHandle: function: NativeUInt; cdecl;
    State: function: Integer; cdecl;
    MakeString: procedure(var S: AnsiString; ACount: Integer); cdecl;
    AppendString: procedure(var S: AnsiString; const ATail: AnsiString); cdecl;
    FreeString: procedure(var S: AnsiString); cdecl;
    GetMem: function(ASize: NativeInt): Pointer; cdecl;
    FreeMem: procedure(P: Pointer); cdecl;
    ReallocMem: function(P: Pointer; ASize: NativeInt): Pointer; cdecl;
    OwnsBlock: function(P: Pointer): Boolean; cdecl;
    MakeList: function(ACount: Integer): TStringList; cdecl;
  end;

procedure CheckSharing(const Lib: TLibApi; const AWhere: string);
function Letters(ACount: Integer): AnsiString;

implementation

uses
  FastMMC, SysUtils, FmmTest;

function Letters(ACount: Integer): AnsiString;
var
  I: Integer;
begin
  SetLength(Result, ACount);
  for I := 1 to ACount do
    Result[I] := AnsiChar(Ord('a') + (I - 1) mod 26);
end;

procedure CheckSharing(const Lib: TLibApi; const AWhere: string);
var
  S: AnsiString;
  P: Pointer;
  L: TStringList;
  B0: NativeUInt;
  I: Integer;
begin
  CheckEquals(FastMMC_DLLHandle, Lib.DLLHandle(), AWhere + ': the program and the library use the same DLL');
  B0 := DllBlocks;
  {Library -> program.}
  S := '';
  Lib.MakeString(S, 1000);
  Check(S = Letters(1000), AWhere + ': a string made in the library reads right here');
  Check(DllBlocks > B0, AWhere + ': the library''s string is a block of the DLL');
  S := S + '!'; {grown here}
  Check(S = Letters(1000) + '!', AWhere + ': grown in the program');
  S := '';      {freed here}
  {Program -> library.}
  S := Letters(300);
  UniqueString(S);
  Lib.AppendString(S, Letters(5000));
  Check(S = Letters(300) + Letters(5000), AWhere + ': a string of the program grown in the library');
  Lib.FreeString(S);
  Check(S = '', AWhere + ': a string of the program freed in the library');
  {Raw blocks both ways.}
  P := Lib.GetMem(100000);
  Check(FastMMC_OwnsBlock(P), AWhere + ': GetMem in the library gives a DLL block');
  ReallocMem(P, 200);
  Check(Lib.OwnsBlock(P), AWhere + ': resized here, the library sees a live block');
  FreeMem(P);
  GetMem(P, 3000);
  P := Lib.ReallocMem(P, 300000);
  Check(FastMMC_OwnsBlock(P), AWhere + ': resized in the library');
  Lib.FreeMem(P);
  {An object made in the library, freed here.}
  L := Lib.MakeList(500);
  Check(FastMMC_OwnsBlock(L) and (L.Count = 500) and (L[499] = 'line 499'), AWhere + ': a list made in the library');
  for I := 0 to 99 do
    L.Add('more');
  L.Free;
  Check(DllBlocks <= B0 + 8, AWhere + ': every block went back (' + IntToStr(B0) + ' before, ' + IntToStr(DllBlocks) + ' after)');
end;

end.
