{ SPDX-License-Identifier: MIT }
{ A program that loads a library using FastMMC with LoadLibrary: the program installed fastmm-c
  first, the library shares it. Strings and blocks cross in both directions; strings the
  library made stay valid after FreeLibrary, because their memory is the DLL's, not the
  library's. }
program test_share_dynamic;

uses
  FastMMC, SysUtils, Classes, FmmTest, ShareChecks;

{$ifdef MSWINDOWS}
const
  LibName = 'sharelib.dll';

function LoadLibraryW(AName: PWideChar): NativeUInt; stdcall; external 'kernel32.dll';
function GetProcAddress(AModule: NativeUInt; AName: PAnsiChar): Pointer; stdcall; external 'kernel32.dll';
function FreeLibrary(AModule: NativeUInt): LongBool; stdcall; external 'kernel32.dll';
{$else}
const
  {dlopen looks for a name without a slash on the library path only.}
  LibName = './libsharelib.so';

function dlopen(AName: PAnsiChar; AFlags: Longint): Pointer; cdecl; external 'c';
function dlsym(AHandle: Pointer; AName: PAnsiChar): Pointer; cdecl; external 'c';
function dlclose(AHandle: Pointer): Longint; cdecl; external 'c';

function LoadLibraryW(AName: PWideChar): NativeUInt;
begin
  Result := NativeUInt(dlopen(PAnsiChar(AnsiString(WideString(AName))), 2 {RTLD_NOW}));
end;

function GetProcAddress(AModule: NativeUInt; AName: PAnsiChar): Pointer;
begin
  Result := dlsym(Pointer(AModule), AName);
end;

function FreeLibrary(AModule: NativeUInt): LongBool;
begin
  Result := dlclose(Pointer(AModule)) = 0;
end;
{$endif}

var
  H: NativeUInt;
  Lib: TLibApi;
  Kept: array[0..9] of AnsiString;
  Big: Pointer;
  I: Integer;
  Ok: Boolean;
  B0: NativeUInt;
begin
  CheckEquals(Ord(mmisInstalled), Ord(FastMM_GetInstallationState), 'the program installed fastmm-c');
  H := LoadLibraryW(LibName);
  Check(H <> 0, LibName + ' loads');
  if H = 0 then
    Halt(Finish('test_share_dynamic'));
  Lib.DLLHandle := GetProcAddress(H, 'Lib_DLLHandle');
  Lib.State := GetProcAddress(H, 'Lib_State');
  Lib.MakeString := GetProcAddress(H, 'Lib_MakeString');
  Lib.AppendString := GetProcAddress(H, 'Lib_AppendString');
  Lib.FreeString := GetProcAddress(H, 'Lib_FreeString');
  Lib.GetMem := GetProcAddress(H, 'Lib_GetMem');
  Lib.FreeMem := GetProcAddress(H, 'Lib_FreeMem');
  Lib.ReallocMem := GetProcAddress(H, 'Lib_ReallocMem');
  Lib.OwnsBlock := GetProcAddress(H, 'Lib_OwnsBlock');
  Lib.MakeList := GetProcAddress(H, 'Lib_MakeList');
  CheckEquals(Ord(mmisUsingSharedMemoryManager), Lib.State(), 'the library shares the program''s fastmm-c');
  CheckSharing(Lib, 'dynamically loaded library');

  B0 := DllBlocks;
  for I := 0 to High(Kept) do
    Lib.MakeString(Kept[I], 100 + I * 20000);
  Big := Lib.GetMem(3 * 1024 * 1024);
  FillChar(Big^, 3 * 1024 * 1024, $5A);
  Check(FreeLibrary(H), 'FreeLibrary(' + LibName + ')');
  Ok := True;
  for I := 0 to High(Kept) do
    if Kept[I] <> Letters(100 + I * 20000) then
      Ok := False;
  Check(Ok, 'strings made by the library read right after it is unloaded');
  Check(FastMMC_OwnsBlock(Big) and (PByte(Big)[3 * 1024 * 1024 - 1] = $5A), 'a block from the unloaded library is alive');
  for I := 0 to High(Kept) do
    Kept[I] := Kept[I] + '.';
  FreeMem(Big);
  for I := 0 to High(Kept) do
    Kept[I] := '';
  Check(DllBlocks <= B0 + 8, 'the unloaded library''s blocks were freed by the program');
  CheckEquals(Ord(mmisInstalled), Ord(FastMM_GetInstallationState), 'the program is still installed');
  CheckEquals(0, FastMMC_CheckHeap, 'the DLL''s heap is consistent');
  Halt(Finish('test_share_dynamic'));
end.
