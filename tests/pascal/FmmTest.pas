{ SPDX-License-Identifier: MIT }
{ A tiny test kit for the Pascal tests, in the style of tests/test_util.h: Check counts a check
  and prints the failing ones, Finish prints "<name>: N checks, F failed" and gives the exit
  code. The checks may run on several threads at once. DllBlocks and friends read the DLL's
  counters (fastmm_get_state), which prove where the RTL's blocks come from. It has no mode
  directive of its own (it compiles in mode delphi and objfpc): Free Pascal 3.2 leaves a used
  unit's mode macros (FPC_DELPHI, FPC_OBJFPC) defined for the rest of the program. }
{$H+}
unit FmmTest;

interface

uses
  FastMMC;

procedure Check(ACondition: Boolean; const AWhat: string);
procedure CheckEquals(AExpected, AActual: Int64; const AWhat: string);
{Prints the summary; returns the exit code (0: every check passed).}
function Finish(const AName: string): Integer;
function FailedChecks: Integer;

{Live blocks and their usable bytes in the DLL, all kinds together.}
function DllBlocks: NativeUInt;
function DllBytes: NativeUInt;
{$ifndef FASTMMC_DELPHI_BRANCH}
{The bytes the previous memory manager (Free Pascal's heap) has handed out to this thread and
not got back. (Not with the Delphi branch of FastMMC, whose previous manager is a
TMemoryManagerEx.)}
function PreviousHeapUsed: PtrUInt;
{$endif}

implementation

var
  Checks, Failures: Longint;
  PrintLock: TRTLCriticalSection;

procedure Check(ACondition: Boolean; const AWhat: string);
begin
  InterlockedIncrement(Checks);
  if not ACondition then
  begin
    InterlockedIncrement(Failures);
    EnterCriticalSection(PrintLock);
    WriteLn('FAILED: ', AWhat);
    LeaveCriticalSection(PrintLock);
  end;
end;

procedure CheckEquals(AExpected, AActual: Int64; const AWhat: string);
var
  S1, S2: string;
begin
  if AExpected <> AActual then
  begin
    Str(AExpected, S1);
    Str(AActual, S2);
    Check(False, AWhat + ': expected ' + S1 + ', got ' + S2);
  end
  else
    Check(True, AWhat);
end;

function FailedChecks: Integer;
begin
  Result := Failures;
end;

function Finish(const AName: string): Integer;
begin
  WriteLn(AName, {$ifdef MSWINDOWS}' (Win'{$else}' (Linux'{$endif}, SizeOf(Pointer) * 8, '): ', Checks, ' checks, ',
    Failures, ' failed');
  if Failures = 0 then
    Result := 0
  else
    Result := 1;
end;

function DllBlocks: NativeUInt;
var
  S: TFastMMC_State;
begin
  FastMMC_GetState(S);
  Result := S.Small.BlocksInUse + S.Medium.BlocksInUse + S.Large.BlocksInUse;
end;

function DllBytes: NativeUInt;
var
  S: TFastMMC_State;
begin
  FastMMC_GetState(S);
  Result := S.Small.BytesInUse + S.Medium.BytesInUse + S.Large.BytesInUse;
end;

{$ifndef FASTMMC_DELPHI_BRANCH}
function PreviousHeapUsed: PtrUInt;
var
  MM: TMemoryManager;
begin
  FastMMC_GetPreviousMemoryManager(MM);
  Result := MM.GetFPCHeapStatus().CurrHeapUsed;
end;
{$endif}

initialization
  InitCriticalSection(PrintLock);

end.
