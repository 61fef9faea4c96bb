{ SPDX-License-Identifier: MIT }
{ test_wrong_order (Linux): EarlyThread, listed before FastMMC, starts a thread in its
  initialization; FastMMC's initialization must stop the program there, with its message on
  standard error and exit code 70, so the main program never runs. Built with NO_EARLY_THREAD it
  is test_no_library: FastMMC first, run where no libfastmmc.so can be found. }
program test_wrong_order;

{$mode delphi}

uses
{$ifndef NO_EARLY_THREAD}
  EarlyThread,
{$endif}
  FastMMC;

begin
  WriteLn('main program ran, FastMMC installed: ', FastMMC_Installed);
end.
