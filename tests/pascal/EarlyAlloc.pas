{ SPDX-License-Identifier: MIT }
{ For test_foreign: a unit listed BEFORE FastMMC, so its initialization allocates from Free
  Pascal's own heap (as the RTL does before any unit runs), and its finalization runs AFTER
  FastMMC has uninstalled, freeing blocks that came from the DLL. }
{$mode delphi}
{$H+}
unit EarlyAlloc;

interface

var
  {From Free Pascal's heap, before FastMMC was installed.}
  EarlyBlock: Pointer;
  EarlyString: AnsiString;
  EarlyObject: TObject;
  {Set by the program while FastMMC is installed (DLL blocks), freed by this unit's
  finalization, after FastMMC's.}
  LateString: AnsiString;
  LateBlock: Pointer;
  LateArray: array of Integer;

implementation

var
  I: Integer;

initialization
  GetMem(EarlyBlock, 3000);
  for I := 0 to 2999 do
    PByte(EarlyBlock)[I] := Byte(I);
  EarlyString := 'early';
  for I := 1 to 20 do
    EarlyString := EarlyString + AnsiChar(Ord('a') + I);
  EarlyObject := TObject.Create;

finalization
  {FastMMC is uninstalled by now: these are DLL blocks freed through the manager it left.}
  LateString := '';
  FreeMem(LateBlock);
  SetLength(LateArray, 100000);
  LateArray[99999] := 1;
  LateArray := nil;
  WriteLn('EarlyAlloc finalization: blocks freed after FastMMC''s finalization');
  {Linux: standard output is buffered, and nothing flushes it after the units' finalizations.}
  Flush(Output);
end.
