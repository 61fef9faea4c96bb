{ SPDX-License-Identifier: MIT }
{ A program and a library (sharelib.dll, linked at load time) that both use FastMMC share one
  memory manager: the library's FastMMC initializes first and owns the DLL's leak report; the
  program's finds it and uses the same heap (mmisUsingSharedMemoryManager). }
program test_share;

uses
  FastMMC, SysUtils, Classes, FmmTest, ShareChecks;

const
{$ifdef MSWINDOWS}
  LibName = 'sharelib.dll';
{$else}
  {libsharelib.so, found through the program's RUNPATH ($ORIGIN: its own folder).}
  LibName = 'sharelib';
{$endif}

function Lib_DLLHandle: NativeUInt; cdecl; external LibName;
function Lib_State: Integer; cdecl; external LibName;
procedure Lib_MakeString(var S: AnsiString; ACount: Integer); cdecl; external LibName;
procedure Lib_AppendString(var S: AnsiString; const ATail: AnsiString); cdecl; external LibName;
procedure Lib_FreeString(var S: AnsiString); cdecl; external LibName;
function Lib_GetMem(ASize: NativeInt): Pointer; cdecl; external LibName;
procedure Lib_FreeMem(P: Pointer); cdecl; external LibName;
function Lib_ReallocMem(P: Pointer; ASize: NativeInt): Pointer; cdecl; external LibName;
function Lib_OwnsBlock(P: Pointer): Boolean; cdecl; external LibName;
function Lib_MakeList(ACount: Integer): TStringList; cdecl; external LibName;

var
  Lib: TLibApi;
begin
  Lib.DLLHandle := Lib_DLLHandle;
  Lib.State := Lib_State;
  Lib.MakeString := Lib_MakeString;
  Lib.AppendString := Lib_AppendString;
  Lib.FreeString := Lib_FreeString;
  Lib.GetMem := Lib_GetMem;
  Lib.FreeMem := Lib_FreeMem;
  Lib.ReallocMem := Lib_ReallocMem;
  Lib.OwnsBlock := Lib_OwnsBlock;
  Lib.MakeList := Lib_MakeList;
  CheckEquals(Ord(mmisInstalled), Lib.State(), 'the library, initialized first, installed fastmm-c');
  CheckEquals(Ord(mmisUsingSharedMemoryManager), Ord(FastMM_GetInstallationState),
    'the program shares the library''s fastmm-c');
  CheckSharing(Lib, 'load-time library');
  CheckEquals(0, FastMMC_CheckHeap, 'the DLL''s heap is consistent');
  Halt(Finish('test_share'));
end.
