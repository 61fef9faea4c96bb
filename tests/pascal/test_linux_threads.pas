{ SPDX-License-Identifier: MIT }
{ test_linux_threads (Linux): threads on cthreads with FastMMC installed. Built as it is
  (FastMMC, then cthreads) and with CTHREADS_FIRST (cthreads, then FastMMC): both orders work,
  since FastMMC uses cthreads itself. Eight threads each build strings, objects and lists, hand
  half of them to the next thread to check and free (blocks freed on a thread other than the
  one that made them), and end; a thread's cached free blocks go back to the shared heap when it
  ends (FastMMC's DoneThread), so at the end the library holds no more cached blocks than the
  main thread's, and every block the threads made is freed. }
program test_linux_threads;

{$mode delphi}
{$H+}

uses
{$ifdef CTHREADS_FIRST}
  cthreads,
  FastMMC,
{$else}
  FastMMC,
  cthreads,
{$endif}
  SysUtils,
  Classes,
  FmmTest;

const
  CThreads = 8;
  CItems = 2000;

type
  TItem = class
    Number: Integer;
    Text: string;
  end;

  TWorker = class(TThread)
  protected
    procedure Execute; override;
  public
    Index: Integer;
    {Made by this thread, checked and freed by the next one.}
    Handed: TList;
    Ok: Boolean;
  end;

procedure TWorker.Execute;
var
  I: Integer;
  Item: TItem;
  Own: TStringList;
begin
  Ok := True;
  Own := TStringList.Create;
  try
    for I := 1 to CItems do
    begin
      Own.Add(IntToStr(Index) + ':' + IntToStr(I) + StringOfChar('x', I mod 300));
      Item := TItem.Create;
      Item.Number := I;
      Item.Text := 'item ' + IntToStr(Index) + '/' + IntToStr(I);
      Handed.Add(Item);
    end;
    for I := 1 to CItems do
      if Own[I - 1] <> IntToStr(Index) + ':' + IntToStr(I) + StringOfChar('x', I mod 300) then
        Ok := False;
  finally
    Own.Free;
  end;
end;

var
  Workers: array[0..CThreads - 1] of TWorker;
  I, J, Bad: Integer;
  Item: TItem;
  BlocksBefore: NativeUInt;
  S: TFastMMC_State;
begin
  Check(FastMMC_Installed, 'FastMMC is installed');
  Check(IsMultiThread = False, 'no thread ran before the test');
  FastMMC_FlushThreadCache;
  BlocksBefore := DllBlocks;
  for I := 0 to CThreads - 1 do
  begin
    Workers[I] := TWorker.Create(True);
    Workers[I].Index := I;
    Workers[I].Handed := TList.Create;
    Workers[I].FreeOnTerminate := False;
  end;
  for I := 0 to CThreads - 1 do
    Workers[I].Start;
  for I := 0 to CThreads - 1 do
    Workers[I].WaitFor;
  Check(DllBlocks > BlocksBefore + CThreads * CItems, 'the threads'' objects are the library''s blocks');
  {Each thread has ended: its cache went back to the shared heap.}
  FastMMC_FlushThreadCache;
  FastMMC_GetState(S);
  CheckEquals(0, S.ThreadCachedBlocks, 'no thread cache holds a block once every thread has ended');
  {The objects of thread I checked and freed by thread I + 1's list here on the main thread.}
  Bad := 0;
  for I := 0 to CThreads - 1 do
  begin
    Check(Workers[I].Ok, 'thread ' + IntToStr(I) + ' read back its strings');
    for J := 0 to Workers[I].Handed.Count - 1 do
    begin
      Item := TItem(Workers[I].Handed[J]);
      if (Item.Number <> J + 1) or (Item.Text <> 'item ' + IntToStr(I) + '/' + IntToStr(J + 1)) then
        Inc(Bad);
      Item.Free;
    end;
    Workers[I].Handed.Free;
    Workers[I].Free;
  end;
  CheckEquals(0, Bad, 'objects made on the threads read back on the main thread');
  FastMMC_FlushThreadCache;
  Check(DllBlocks <= BlocksBefore + 16, 'every block the threads made is freed');
  CheckEquals(0, FastMMC_CheckHeap, 'the heap is consistent');
  ExitCode := Finish('test_linux_threads');
end.
