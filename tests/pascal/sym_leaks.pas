{ SPDX-License-Identifier: MIT }
{ Debug reports named from a Delphi-format detailed map (tests/symbols/check_pascal_map.py writes
  the map from this program's own symbols and line information, built with -gw -gl). In debug
  mode it leaks a block and frees another twice; FastMMC writes both to the event log named by
  its first argument with FastMM5's templates, each frame as the DLL names it. The lines marked
  "MARK:" are those the check expects the frames to name. }
program sym_leaks;

uses
  FastMMC, SysUtils;

var
  Sink: Pointer;
  Done: Integer;

procedure LeakHere;
begin
  GetMem(Sink, 40); {MARK:leak}
  Inc(Done);
end;

procedure FreeTwice;
var
  Q: Pointer;
begin
  GetMem(Q, 24); {MARK:alloc}
  FreeMem(Q); {MARK:free}
  try
    FreeMem(Q); {MARK:double}
  except
    on EInvalidPointer do
      Inc(Done);
  end;
end;

begin
  FastMM_MessageBoxEvents := [];
  FastMM_LogToFileEvents := FastMM_LogToFileEvents + [mmetUnexpectedMemoryLeakDetail];
  ReportMemoryLeaksOnShutdown := True;
  FastMM_SetEventLogFilename(PWideChar(WideString(ParamStr(1))));
  FastMM_DeleteEventLogFile;
  FastMM_EnterDebugMode;
  LeakHere; {MARK:main_leak}
  FreeTwice; {MARK:main_double}
  WriteLn('base: ', HexStr(PtrUInt(HInstance), SizeOf(Pointer) * 2));
end.
