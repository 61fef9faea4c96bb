{ SPDX-License-Identifier: MIT }
{ The leak report at exit. Run by run_check.cmake, which reads standard error and the event log
  after the program has ended:

    test_leaks leak <log>   leaks a block registered as an expected leak (by pointer), an
                            object of a class registered as an expected leak (by class), three
                            6000-byte blocks of which two are registered by size, and, with
                            nobody registering them, a 5000-byte block, an object of another
                            class and an AnsiString: the report lists those four alone, as
                            FastMM5's summary does ("size: count x class", by size), and the
                            event log has each one's detail (its class and first bytes). The
                            report's caption and text come from FastMM5's template variables,
                            set here.
    test_leaks clean <log>  leaks only a registered block: no report at all.
    test_leaks debug <log>  in debug mode, with leak details logged (FastMM5's
                            mmetUnexpectedMemoryLeakDetail in FastMM_LogToFileEvents): each leaked
                            debug block gets its own entry from FastMM5's template, a 77-byte block
                            and an object of an unregistered class; an object of a class registered
                            as an expected leak gets none, nor does a 3000-byte block with 2900 bytes
                            registered by size (the block holds the size: the walk's summary and
                            the debug details match registrations alike); the DLL's own report is
                            not written.

  ReportMemoryLeaksOnShutdown (Delphi's switch; FastMMC declares it for Free Pascal) asks for
  the summary as a message, which a console program gets on standard error; the event log gets
  it too because mmetUnexpectedMemoryLeakSummary is added to FastMM_LogToFileEvents, as in
  FastMM5. }
program test_leaks;

uses
  FastMMC, SysUtils, FmmTest;

type
  TExpectedLeak = class
    Data: array[0..9] of Integer;
  end;
  TUnexpectedLeak = class
    Data: array[0..4] of Integer;
  end;

var
  Expected, Unexpected, BySize: Pointer;
  Text: AnsiString;
  I: Integer;
  LogName: UnicodeString;
  Obj: TObject;
begin
  LogName := UnicodeString(ParamStr(2));
  Check(LogName <> '', 'usage: test_leaks leak|clean <event log>');
  FastMM_SetEventLogFilename(PWideChar(LogName));
  Check(FastMM_GetEventLogFilename = LogName, 'FastMM_GetEventLogFilename gives back the name set');
  FastMM_DeleteEventLogFile;
  ReportMemoryLeaksOnShutdown := True;
  {FastMM5's switch for the event log, on top of ReportMemoryLeaksOnShutdown's message.}
  FastMM_LogToFileEvents := FastMM_LogToFileEvents + [mmetUnexpectedMemoryLeakSummary];
  Check(FastMM_GetInstallationState = mmisInstalled, 'FastMMC is installed and owns the report');

  GetMem(Expected, 100);
  Check(FastMM_RegisterExpectedMemoryLeak(Expected), 'registering an expected leak by pointer');
  {FastMM5 counts registrations of a pointer: two, then two unregistrations, then none left.}
  Check(FastMM_RegisterExpectedMemoryLeak(Expected), 'the same pointer a second time');
  CheckEquals(2, FastMM_GetRegisteredMemoryLeaks[0].LeakCount, 'registered twice: LeakCount 2');
  Check(FastMM_UnregisterExpectedMemoryLeak(Expected), 'unregistering it');
  Check(FastMM_UnregisterExpectedMemoryLeak(Expected), 'unregistering it a second time');
  Check(not FastMM_UnregisterExpectedMemoryLeak(Expected), 'a third unregistration is refused');
  CheckEquals(0, Length(FastMM_GetRegisteredMemoryLeaks), 'no registration left');
  Check(FastMM_RegisterExpectedMemoryLeak(Expected), 'registering it again');

  if ParamStr(1) = 'leak' then
  begin
    {FastMM5's templates: token 14 is the summary's entries, 16 the event log's path.}
    FastMM_MemoryLeakMessageBoxCaption := 'Leaks found by test_leaks';
    FastMM_MemoryLeakSummaryMessage_LeakDetailNotLogged := 'test_leaks summary for {16}:'#13#10'{14}'#13#10;
    FastMM_MemoryLeakSummaryMessage_LeakDetailLoggedToEventLog := FastMM_MemoryLeakSummaryMessage_LeakDetailNotLogged;
    {FastMM5's leak detail, one entry per block in the event log.}
    FastMM_LogToFileEvents := FastMM_LogToFileEvents + [mmetUnexpectedMemoryLeakDetail];
    Obj := TExpectedLeak.Create;
    Check(FastMM_RegisterExpectedMemoryLeak(TExpectedLeak, 1), 'registering an expected leak by class');
    Check(FastMM_RegisterExpectedMemoryLeak(NativeInt(6000), 2), 'registering two expected leaks by size');
    for I := 1 to 3 do
    begin
      GetMem(BySize, 6000);
      FillChar(BySize^, 6000, 0);
    end;
    GetMem(Unexpected, 5000);
    FillChar(Unexpected^, 5000, 0);
    PByte(Unexpected)^ := 1;
    TUnexpectedLeak.Create;
    {A string nobody frees: its reference dropped without releasing it.}
    Text := 'a leaked string ' + ParamStr(1);
    Pointer(Text) := nil;
    CheckEquals(3, Length(FastMM_GetRegisteredMemoryLeaks), 'three registrations listed');
  end;
  if ParamStr(1) = 'debug' then
  begin
    FastMM_LogToFileEvents := FastMM_LogToFileEvents + [mmetUnexpectedMemoryLeakDetail];
    FastMM_MemoryLeakDetailMessage_DebugBlock := 'DEBUG LEAK {3} bytes, number {9}, class {8}'#13#10;
    Check(FastMM_EnterDebugMode, 'debug mode');
    Unexpected := FastMM_DebugGetMem(77);
    Obj := TUnexpectedLeak.Create;
    Obj := TExpectedLeak.Create;
    Check(FastMM_RegisterExpectedMemoryLeak(TExpectedLeak, 1), 'registering an expected leak by class');
    {By size, as FastMM5 matches it and as the summary does: a block that holds at least the size
    registered.}
    BySize := FastMM_DebugGetMem(3000);
    Check(FastMM_RegisterExpectedMemoryLeak(NativeInt(2900), 1), 'registering an expected leak by size');
  end;
  ExitCode := Finish('test_leaks ' + ParamStr(1));
end.
