{ SPDX-License-Identifier: MIT }
{ FastMMC: installs fastmm-c as the memory manager of a Delphi or Free Pascal program.

  Put FastMMC first in the program's uses clause (the .dpr / .lpr), and ship fastmmc32.dll
  (Win32) or fastmmc64.dll (Win64) beside the exe. During its initialization, before any other
  unit of the program allocates, the unit loads the DLL and installs its entry points with
  SetMemoryManager; at the end, after every unit that uses it has been finalized, it reports
  leaks (when asked to) and uninstalls.

  A library (DLL) that uses FastMMC and the program that loads it, also using FastMMC, share one
  manager: both load the same fastmmc DLL, which holds one heap for the whole process. A string
  or object allocated in the one can be freed or resized in the other, and it stays valid after
  the library is unloaded.

  On Linux (Free Pascal 3.2 on x86_64-linux; Delphi's Linux64 branch is written, not built by
  Delphi) the unit loads libfastmmc.so from beside its module or from the library path with
  dlopen, or, compiled with FASTMMC_STATIC, has libfastmmc.a linked into the program; it uses
  cthreads itself, and stops a program in which a unit before it started a thread
  (docs/linux.md, "Free Pascal on Linux").

  Compilers:
    - Delphi XE2 (CompilerVersion 23) and later, Win32 and Win64: TMemoryManagerEx and
      SetMemoryManager, filled from the record the DLL hands out. On Win32 the DLL's entry
      points use Delphi's register convention, so GetMem, FreeMem, ReallocMem and AllocMem are
      the DLL's own.
    - Free Pascal 3.2 and later, Win32 and Win64, in mode delphi or mode objfpc (any other
      mode: the unit switches itself to objfpc). Free Pascal's TMemoryManager differs from
      Delphi's (ReAllocMem takes the pointer by reference, FreeMem returns a size, MemSize):
      the DLL has entry points for it too, so GetMem, FreeMem, FreeMemSize, AllocMem,
      ReAllocMem and MemSize are the DLL's own; GetHeapStatus and GetFPCHeapStatus are the
      unit's, and the fields not replaced (InitThread, DoneThread, RelocateHeap, NeedLock) keep
      the previous manager's values.

  Blocks that the previous manager handed out before the install (Free Pascal's RTL allocates
  before the first unit's initialization runs) are freed, resized and measured by the previous
  manager: the DLL's entry points are bound to it and pass such blocks on from their slow path.
  A pointer in the DLL's memory that is not a live block (a second FreeMem, a ReallocMem of a
  freed block, a pointer inside a block) raises EInvalidPointer and never reaches the previous
  manager. With a DLL older than this unit (or one whose eight slots other modules of the
  process took) the same is done by small Pascal adapters.

  Every routine, type, constant and variable of FastMM5's interface section is here with
  FastMM5's name and signature, so a program written against FastMM5 builds against this unit by
  changing its uses clause; where the meaning differs docs/delphi.md says how, in "FastMM5's routines in FastMMC". FastMMC_*
  routines are fastmm-c's own.

  Conditional defines read when the unit is compiled (as FastMM5's):
    FastMM_FullDebugMode (or FullDebugMode, FastMM_FullDebugModeWhenDLLAvailable): start in
      the DLL's debug mode (FastMM_EnterDebugMode; no support library is needed).
    FastMM_EnableMemoryLeakReporting (or EnableMemoryLeakReporting): report leaks at exit
      (log file and message box / standard error); with
      FastMM_RequireDebuggerPresenceForLeakReporting only under a debugger, with
      FastMM_RequireIDEPresenceForLeakReporting only while the Delphi IDE runs.
    FastMM_NoMessageBoxes (or NoMessageBoxes): no message boxes.
    FastMM_NeverUninstall (or NeverUninstall): FastMM_NeverUninstall := True.
    FastMM_ClearLogFileOnStartup (or ClearLogFileOnStartup): delete the event log at start.
    FastMM_Align16Bytes (or Align16Bytes): FastMM_EnterMinimumAddressAlignment(maa16Bytes).
    FastMM_DisableAutomaticInstall: call FastMM_Initialize / FastMM_Finalize yourself.
  And one for fastmm-c's tests only: FASTMMC_DELPHI_BRANCH makes Free Pascal compile the Delphi
  branch (TMemoryManagerEx); see below.

  This unit is part of fastmm-c. Copyright (c) 2026 the fastmm-c authors. Licensed under the MIT
  licence: the LICENSE file of fastmm-c's sources and of each package has its text. }

{$ifdef FPC}
  {$if not defined(FPC_DELPHI) and not defined(FPC_OBJFPC)}
    {$mode objfpc}
  {$ifend}
  {Record methods (TFastMM_DebugBlockHeader) in mode objfpc too; enumerations of one byte, as
  Delphi's.}
  {$modeswitch advancedrecords}
  {$packenum 1}
  {Free Pascal's TMemoryManager, unless a test compiles the Delphi branch (TMemoryManagerEx):
  FASTMMC_DELPHI_BRANCH is for tests only; the unit then uses DelphiMemoryManager
  (tests/pascal/delphi_rtl), which supplies Delphi's TMemoryManagerEx and Get/SetMemoryManager
  for it, compiled beforehand on its own.}
  {$ifndef FASTMMC_DELPHI_BRANCH}
    {$define FMMC_FPC_RECORD}
  {$endif}
{$endif}
{Linux (Free Pascal's x86_64-linux, Delphi's Linux64): the C library's calls stand in for the
Windows API (FastMMC.Posix.inc), the library is libfastmmc.so, loaded with dlopen, or with
FASTMMC_STATIC (Free Pascal) linked into the program from libfastmmc.a (FastMMC.Static.inc).}
{$ifndef MSWINDOWS}
  {$define FMMC_POSIX}
  {$ifdef FASTMMC_STATIC}
    {$define FMMC_STATIC}
  {$endif}
{$endif}
{$if defined(WIN64) or defined(CPU64) or defined(CPUX64) or defined(CPU64BITS)}
  {$define FMMC_64}
{$ifend}
{$H+}
{$R-}
{$Q-}
{$B-}
{$ifndef FPC}
  {THeapStatus and GetHeapStatus are deprecated in Delphi; FastMM5 keeps them too.}
  {$warn SYMBOL_DEPRECATED OFF}
  {$warn SYMBOL_PLATFORM OFF}
{$endif}

unit FastMMC;

interface

{$ifndef FPC}
  {$if CompilerVersion < 23}
    {$message fatal 'FastMMC is written for Delphi XE2 (CompilerVersion 23) and later'}
  {$ifend}
{$endif}

{Free Pascal on Linux: cthreads, the RTL's thread manager on pthreads, is initialized before this
unit, wherever the program names it (before FastMMC, after it, or not at all): the unit's locks
and the library's threads are pthreads, and a program's threads need it anyway. A program whose
units started a thread before this unit's initialization is stopped there (FastMMC is not first).}
{$ifdef FPC}
{$if defined(FMMC_POSIX) and defined(FASTMMC_DELPHI_BRANCH)}
uses
  cthreads, DelphiMemoryManager;
{$elseif defined(FMMC_POSIX)}
uses
  cthreads;
{$elseif defined(FASTMMC_DELPHI_BRANCH)}
uses
  DelphiMemoryManager;
{$ifend}
{$endif}

{$ifdef FullDebugMode} {$define FastMM_FullDebugMode} {$endif}
{$ifdef FullDebugModeWhenDLLAvailable} {$define FastMM_FullDebugMode} {$endif}
{$ifdef FastMM_FullDebugModeWhenDLLAvailable} {$define FastMM_FullDebugMode} {$endif}
{$ifdef EnableMemoryLeakReporting} {$define FastMM_EnableMemoryLeakReporting} {$endif}
{$ifdef NoMessageBoxes} {$define FastMM_NoMessageBoxes} {$endif}
{$ifdef NeverUninstall} {$define FastMM_NeverUninstall} {$endif}
{$ifdef ClearLogFileOnStartup} {$define FastMM_ClearLogFileOnStartup} {$endif}
{$ifdef Align16Bytes} {$define FastMM_Align16Bytes} {$endif}
{$ifdef RequireDebuggerPresenceForLeakReporting} {$define FastMM_RequireDebuggerPresenceForLeakReporting} {$endif}
{$ifdef RequireIDEPresenceForLeakReporting} {$define FastMM_RequireIDEPresenceForLeakReporting} {$endif}

const
  CFastMMC_Version = '0.2.0';
  {The DLL this unit loads: from the folder of the module (exe or dll) that contains this unit,
  else from the usual DLL search path.}
{$if defined(FMMC_POSIX)}
  CFastMMC_DLLName = 'libfastmmc.so';
{$elseif defined(WIN64)}
  CFastMMC_DLLName = 'fastmmc64.dll';
{$else}
  CFastMMC_DLLName = 'fastmmc32.dll';
{$ifend}

  {The version of FastMM5's interface this unit follows (5.07).}
  CFastMM_Version = 507;
  {fastmm-c's arenas (src/policy.h, ARENA_COUNT): small and medium blocks come from 4 arenas, large
  blocks from one list. FastMM5's defines FastMM_5Arenas .. FastMM_16Arenas change nothing here:
  the DLL is built with its own count.}
  CFastMM_SmallBlockArenaCount = 4;
  CFastMM_MediumBlockArenaCount = 4;
  CFastMM_LargeBlockArenaCount = 1;
  {The default name of FastMM's debug support library (FastMM_LoadDebugSupportLibrary).}
{$if defined(FMMC_POSIX)}
  {No such library is published for Linux: a program may name its own (the exports of FastMM's
  support library); without one the library walks the stack itself.}
  CFastMM_DefaultDebugSupportLibraryName = 'libFastMM_FullDebugMode.so';
{$elseif defined(WIN64)}
  CFastMM_DefaultDebugSupportLibraryName = 'FastMM_FullDebugMode64.dll';
{$else}
  CFastMM_DefaultDebugSupportLibraryName = 'FastMM_FullDebugMode.dll';
{$ifend}

type
  {FastMM5's types, with FastMM5's names and layouts.}
  TFastMM_MemoryManagerOptimizationStrategy = (mmosOptimizeForSpeed, mmosBalanced, mmosOptimizeForLowMemoryUsage);

  TFastMM_MemoryManagerEventType = (
    mmetAnotherThirdPartyMemoryManagerAlreadyInstalled,
    mmetCannotInstallAfterDefaultMemoryManagerHasBeenUsed,
    mmetCannotSwitchToSharedMemoryManagerWithLivePointers,
    mmetUnexpectedMemoryLeakDetail,
    mmetUnexpectedMemoryLeakSummary,
    mmetDebugBlockDoubleFree,
    mmetDebugBlockReallocOfFreedBlock,
    mmetDebugBlockHeaderCorruption,
    mmetDebugBlockFooterCorruption,
    mmetDebugBlockModifiedAfterFree,
    mmetVirtualMethodCallOnFreedObject);
  TFastMM_MemoryManagerEventTypeSet = set of TFastMM_MemoryManagerEventType;

  TFastMM_MemoryManagerInstallationState = (
    mmisDefaultMemoryManagerInUse,
    mmisOtherThirdPartyMemoryManagerInstalled,
    {Another module of the process installed fastmm-c first; this one uses the same heap.}
    mmisUsingSharedMemoryManager,
    mmisInstalled);

  {FastMM5's debug block header: 64 bytes directly before the user data of a debug block, on
  both platforms; the DLL's debug blocks are laid out so (include/fastmm.h,
  fastmm_debug_block_header). The footer follows the UserSize user bytes: a Cardinal checksum,
  then the allocation stack trace and the free stack trace (StackTraceEntryCount entries each).
  HeaderCheckSum is the xor, seeded with $FFFFFFFF, of the Cardinals after it in the header;
  the footer checksum the same over both stack traces. Reserved1, Reserved2 and ReservedSpace1
  are the DLL's.}
{$PointerMath On}
  PFastMM_DebugBlockHeader = ^TFastMM_DebugBlockHeader;
{$PointerMath Off}
  TFastMM_DebugBlockHeader = packed record
    {Room the small and medium block managers use in a free block.}
    Reserved1: Pointer;
    Reserved2: Pointer;
{$ifdef FMMC_64}
    ReservedSpace1: array[0..3] of Byte;
{$else}
    ReservedSpace1: array[0..19] of Byte;
{$endif}
    HeaderCheckSum: Cardinal;
    {Milliseconds since the system started (GetTickCount) when the block was allocated.}
    AllocationTickCount: Cardinal;
    {Debug allocations are numbered from 1 (wrapping at 4G).}
    AllocationNumber: Cardinal;
    {The size the program asked for.}
    UserSize: NativeInt;
    {In a freed block: the first pointer of the user data before the free (the class of a
    freed object).}
    PreviouslyUsedByClass: Pointer;
    {FastMM_CurrentAllocationGroup when the block was allocated.}
    AllocationGroup: Cardinal;
    AllocatedByThread: Cardinal;
    FreedByThread: Cardinal;
    {Which debug features the block got: 1 checksums, 2 fill pattern (freed blocks).}
    DebugFeatureFlags: Byte;
    StackTraceEntryCount: Byte;
    {32 while the block is in use, 33 once freed.}
    DebugBlockFlags: SmallInt;
    function DebugFooterPtr: PCardinal; inline;
    function DebugFooter_AllocationStackTracePtr: PNativeUInt; inline;
    function DebugFooter_FreeStackTracePtr: PNativeUInt; inline;
    function CalculateHeaderCheckSum: Cardinal;
    function CalculateFooterCheckSum: Cardinal;
    procedure CalculateAndSetHeaderAndFooterCheckSums;
  end;

  TFastMM_WalkAllocatedBlocksBlockType = (
    btLargeBlock,
    btMediumBlockSpan,
    btMediumBlock,
    btSmallBlockSpan,
    btSmallBlock);
  TFastMM_WalkBlocksBlockTypes = set of TFastMM_WalkAllocatedBlocksBlockType;

  TFastMM_WalkAllocatedBlocks_BlockInfo = record
    BlockAddress: Pointer;
    {The debug header of a debug block (BlockAddress is then its user data), else nil.}
    DebugInformation: PFastMM_DebugBlockHeader;
    {The size of the block or span, headers and padding included.}
    BlockSize: NativeInt;
    {What the program may use: the requested size of a debug block.}
    UsableSize: NativeInt;
    {FastMM_WalkBlocks's AUserData.}
    UserData: Pointer;
    ArenaIndex: Byte;
    BlockType: TFastMM_WalkAllocatedBlocksBlockType;
    BlockIsFree: Boolean;
    {Medium block spans only.}
    IsSequentialFeedMediumBlockSpan: Boolean;
    MediumBlockSequentialFeedSpanUnusedBytes: Integer;
    {Small block spans only.}
    IsSequentialFeedSmallBlockSpan: Boolean;
    SmallBlockSpanBlockSize: Word;
    SmallBlockSequentialFeedSpanUnusedBytes: Integer;
  end;

  TFastMM_WalkBlocksCallback = procedure(const ABlockInfo: TFastMM_WalkAllocatedBlocks_BlockInfo);

  TFastMM_StringDataType = (sdtNotAString, sdtAnsiString, sdtUnicodeString);

  TFastMM_MinimumAddressAlignment = (maa8Bytes, maa16Bytes, maa32Bytes, maa64Bytes);
  TFastMM_MinimumAddressAlignmentSet = set of TFastMM_MinimumAddressAlignment;

  TFastMM_DebugModeOption = (dmoNeverFreeSmallBlockSpans, dmoNeverMergeFreeMediumBlocks, dmoNoBlockFillPatterns,
    dmoNoBlockCheckSums);
  TFastMM_DebugModeOptions = set of TFastMM_DebugModeOption;

  TFastMM_TextFileEncoding = (teUTF8, teUTF8_BOM, teUTF16LE, teUTF16LE_BOM);

  {Fills APReturnAddresses with up to AMaxDepth return addresses of the calling thread, skipping
  ASkipFrames frames; unused entries are 0.}
  TFastMM_GetStackTrace = procedure(APReturnAddresses: PNativeUInt; AMaxDepth, ASkipFrames: Cardinal);
  {Writes the text of a stack trace (zero entries ignored) from APBuffer on, not past
  APBufferEnd; returns the new end of the text.}
  TFastMM_ConvertStackTraceToText = function(APReturnAddresses: PNativeUInt; AMaxDepth: Cardinal;
    APBuffer, APBufferEnd: PWideChar): PWideChar;
  {The support library's LogStackTrace (FastMM4's).}
  TFastMM_LegacyConvertStackTraceToText = function(APReturnAddresses: PNativeUInt; AMaxDepth: Cardinal;
    APBuffer: PAnsiChar): PAnsiChar;

{$ifdef FPC}
  {Delphi's System.TChunkStatus and TMemoryMap (FastMM_GetMemoryMap), which Free Pascal does not
  have: the state of each 64 KB of the lower 4 GB of the address space.}
  TChunkStatus = (csUnallocated, csAllocated, csReserved, csSysAllocated, csSysReserved);
  TMemoryMap = array[0..65535] of TChunkStatus;
{$endif}

  TFastMM_RegisteredMemoryLeak = record
    LeakAddress: Pointer;
    LeakedClass: TClass;
    LeakSize: NativeInt;
    LeakCount: Integer;
  end;
  TFastMM_RegisteredMemoryLeaks = array of TFastMM_RegisteredMemoryLeak;

  TFastMM_UsageSummary = record
    {The bytes the application has allocated (the usable size of every live block).}
    AllocatedBytes: NativeUInt;
    {The memory the manager holds from the OS less AllocatedBytes.}
    OverheadBytes: NativeUInt;
    {100 * AllocatedBytes / (AllocatedBytes + OverheadBytes).}
    EfficiencyPercentage: Double;
  end;

  {The record the RTL's GetMemoryManager / SetMemoryManager take.}
{$ifdef FMMC_FPC_RECORD}
  TFastMMC_RTLMemoryManager = TMemoryManager;
{$else}
  TFastMMC_RTLMemoryManager = TMemoryManagerEx;
{$endif}

{$ifdef FPC}
  {Delphi's System.TSmallBlockTypeState, which Free Pascal does not have.}
  TSmallBlockTypeState = packed record
    InternalBlockSize: Cardinal;
    UseableBlockSize: Cardinal;
    AllocatedBlockCount: NativeUInt;
    ReservedAddressSpace: NativeUInt;
  end;
{$endif}

  TFastMM_MemoryManagerState = packed record
    SmallBlockTypeCount: Cardinal;
    SmallBlockTypeStates: array[0..63] of TSmallBlockTypeState;
    AllocatedMediumBlockCount: Cardinal;
    TotalAllocatedMediumBlockSize: NativeUInt;
    ReservedMediumBlockAddressSpace: NativeUInt;
    AllocatedLargeBlockCount: Cardinal;
    TotalAllocatedLargeBlockSize: NativeUInt;
    ReservedLargeBlockAddressSpace: NativeUInt;
  end;

  TFastMM_LogStateToFile_SortOrder = (soDescendingTotalMemoryUsage, soAlphabetical);

  {fastmm-c's own view (include/fastmm.h, fastmm_state): byte counts are usable bytes.}
  TFastMMC_KindUsage = record
    BlocksInUse: NativeUInt;
    BytesInUse: NativeUInt;
    BytesReserved: NativeUInt;
  end;
  TFastMMC_State = record
    Small: TFastMMC_KindUsage;
    Medium: TFastMMC_KindUsage;
    Large: TFastMMC_KindUsage;
    OSBytesReserved: NativeUInt;
    OSBytesPeak: NativeUInt;
    OSMapCalls: NativeUInt;
    OSUnmapCalls: NativeUInt;
    ThreadCachedBlocks: NativeUInt;
    SmallClassCount: NativeUInt;
  end;

{------------------------Core memory manager interface (FastMM5)------------------------}
{These call the DLL directly. FastMM_FreeMem returns 0 on success, non-zero for a pointer the
DLL does not own.}
function FastMM_GetMem(ASize: NativeInt): Pointer;
function FastMM_FreeMem(APointer: Pointer): Integer;
function FastMM_ReallocMem(APointer: Pointer; ANewSize: NativeInt): Pointer;
function FastMM_AllocMem(ASize: NativeInt): Pointer;

{------------------------Debug mode core memory manager interface (FastMM5)------------------------}
{A debug block whatever the mode, as in FastMM5 (the DLL's fastmm_debug_* exports): GetMem fills
it with $90 (unless dmoNoBlockFillPatterns), AllocMem zeroes it; FreeMem frees any block (a
debug block checked, filled and quarantined); ReallocMem keeps a debug block's information and
turns a normal block into a debug block. FastMM_DebugFreeMem and FastMM_DebugReallocMem raise
EInvalidPointer for a pointer that is not aligned as every block is (FastMM5 does); all four
scan the debug blocks first when FastMM_DebugMode_ScanForCorruptionBeforeEveryOperation is
True.}
function FastMM_DebugGetMem(ASize: NativeInt): Pointer;
function FastMM_DebugFreeMem(APointer: Pointer): Integer;
function FastMM_DebugReallocMem(APointer: Pointer; ANewSize: NativeInt): Pointer;
function FastMM_DebugAllocMem(ASize: NativeInt): Pointer;

{------------------------Expected memory leaks (FastMM5)------------------------}
{As FastMM5's: the leak report at exit leaves out a block registered by pointer, and ACount
blocks of a class registered by class (the block holds an object of the class) or by size (the
block holds at least that many bytes: the closest registered size below the block's first).}
function FastMM_RegisterExpectedMemoryLeak(ALeakedPointer: Pointer): Boolean; overload;
function FastMM_RegisterExpectedMemoryLeak(ALeakedObjectClass: TClass; ACount: Integer = 1): Boolean; overload;
function FastMM_RegisterExpectedMemoryLeak(ALeakedBlockSize: NativeInt; ACount: Integer = 1): Boolean; overload;
function FastMM_UnregisterExpectedMemoryLeak(ALeakedPointer: Pointer): Boolean; overload;
function FastMM_UnregisterExpectedMemoryLeak(ALeakedObjectClass: TClass; ACount: Integer = 1): Boolean; overload;
function FastMM_UnregisterExpectedMemoryLeak(ALeakedBlockSize: NativeInt; ACount: Integer = 1): Boolean; overload;
function FastMM_GetRegisteredMemoryLeaks: TFastMM_RegisteredMemoryLeaks;

{------------------------Diagnostics (FastMM5)------------------------}
{Outside a debug mode FastMM5 returns the usable size for both; so does fastmm-c. 0 for a
pointer that is not a live block of the DLL.}
function FastMM_BlockCurrentUserBytes(APointer: Pointer): NativeInt;
function FastMM_BlockMaximumUserBytes(APointer: Pointer): NativeInt;
{Returns the calling thread's cached free blocks to the shared heap. Always True.}
function FastMM_ProcessAllPendingFrees: Boolean;
{Calls ACallBack for each block of the kinds in AWalkBlockTypes ([] = all), in use or (with
AWalkUsedBlocksOnly False) free; a block in a thread's cache or a freed debug block waiting in the
quarantine is free. Blocks in allocation groups outside [AMinimumAllocationGroup,
AMaximumAllocationGroup] are left out; a block that is not a debug block is in group 0, spans in
none (AMinimumAllocationGroup above 0 leaves them out). False when an arena stayed locked for
ALockTimeoutMilliseconds and was skipped. Unlike FastMM5, ACallBack runs with no lock of the
memory manager held, so it may allocate and free; a block freed meanwhile by another thread may
still be reported (check its memory before reading it). An exception raised by ACallBack ends
the walk and is raised again from FastMM_WalkBlocks.}
function FastMM_WalkBlocks(ACallBack: TFastMM_WalkBlocksCallback; AWalkBlockTypes: TFastMM_WalkBlocksBlockTypes = [];
  AWalkUsedBlocksOnly: Boolean = True; AUserData: Pointer = nil; ALockTimeoutMilliseconds: Cardinal = 1000;
  AMinimumAllocationGroup: Cardinal = 0; AMaximumAllocationGroup: Cardinal = $ffffffff): Boolean;
{Whether the AAvailableSpaceInBlock bytes at APMemoryBlock look like the start of a string
block of this compiler's RTL (header, then characters of at least #9, then #0).}
function FastMM_DetectStringData(APMemoryBlock: Pointer; AAvailableSpaceInBlock: NativeInt): TFastMM_StringDataType;
{The class of the object at APointer, or nil: the DLL reads the first pointer there and takes it
for a class when it is a VMT that agrees with itself and names the class
(fastmm_get_block_class); nil before the DLL is loaded and with a DLL older than that export.}
function FastMM_DetectClassInstance(APointer: Pointer): TClass;
{Checks every debug block, live or quarantined. On damage it reports each fault (FastMM5's
event, template and routing) and raises EInvalidPointer (run-time error 204 without SysUtils),
as FastMM5 does; else True.}
function FastMM_ScanDebugBlocksForCorruption(ALockTimeoutMilliseconds: Cardinal = 50): Boolean;
{The memory the DLL holds from the OS, in bytes.}
function FastMM_GetCurrentMemoryUsage: NativeUInt;
{The lock timeout parameters are accepted for FastMM5 compatibility; fastmm-c's statistics
wait for each lock briefly and are always complete.}
function FastMM_GetHeapStatus(ALockTimeoutMilliseconds: Cardinal = 50): THeapStatus;
function FastMM_GetUsageSummary(ALockTimeoutMilliseconds: Cardinal = 50): TFastMM_UsageSummary;
{The DLL's small size classes in ascending order with their live blocks and span bytes, medium
and large totals.}
procedure FastMM_GetMemoryManagerState(var AMemoryManagerState: TFastMM_MemoryManagerState;
  ALockTimeoutMilliseconds: Cardinal = 50);
{The state of every 64 KB of the lower 4 GB of the address space: csAllocated where the DLL's
medium spans and large blocks are (FastMM5's walk of them), csSysAllocated / csSysReserved for
other committed / reserved memory.}
procedure FastMM_GetMemoryMap(var AMemoryMap: TMemoryMap; ALockTimeoutMilliseconds: Cardinal = 50);
{As FastMM5's: the usage summary (FastMM_LogStateToFileTemplate), then one line
(FastMM_LogStateToFileTemplate_UsageDetail) per kind of content of the blocks in use in the
allocation groups asked for, less those in the groups to subtract: each object class
(FastMM_DetectClassInstance), AnsiString, UnicodeString (FastMM_DetectStringData) or Unknown,
sorted by ASortOrder. APFilename = nil: the default state log
(<application>_MemoryManager_StateLog.txt).}
function FastMM_LogStateToFile(APFilename: PWideChar; APAdditionalDetails: PWideChar = nil;
  ATruncateFile: Boolean = True; ASortOrder: TFastMM_LogStateToFile_SortOrder = soDescendingTotalMemoryUsage;
  ALockTimeoutMilliseconds: Cardinal = 50; AAddUsageInAllocationGroupsFrom: Cardinal = 0;
  AAddUsageInAllocationGroupsUpTo: Cardinal = $ffffffff; ASubtractUsageInAllocationGroupsFrom: Cardinal = $ffffffff;
  ASubtractUsageInAllocationGroupsUpTo: Cardinal = 0): Boolean;
{Beyond FastMM5: one self-contained HTML page (fastmm_write_usage_report) with what FastMM's usage
tracker shows in a window: the address space the memory manager holds, each 64 KB region
coloured by block kind and shaded by how full it is, the usage of each small size class, and the
largest blocks in use. APFilename = nil: <application>_MemoryManager_UsageReport.html. False when
the file could not be written or the DLL is older than the routine.}
function FastMM_WriteUsageReport(APFilename: PWideChar = nil): Boolean;

{------------------------Sharing (FastMM5)------------------------}
{Every module that installs fastmm-c shares the DLL's one heap already: these return True when
fastmm-c is installed in this module.}
function FastMM_AttemptToUseSharedMemoryManager: Boolean;
function FastMM_ShareMemoryManager: Boolean;

{------------------------Configuration (FastMM5)------------------------}
{FastMM_Initialize loads the DLL and installs it; False if it was called before, another
memory manager is installed, or the DLL cannot be loaded. FastMM_Finalize reports leaks (when
asked to) and uninstalls; False if FastMM_Initialize was not called.}
function FastMM_Initialize: Boolean;
function FastMM_Finalize: Boolean;
function FastMM_GetInstallationState: TFastMM_MemoryManagerInstallationState;
{As FastMM5's, the strategy sets the size of the medium spans mapped from then on: the DLL's are
4 MB for mmosOptimizeForSpeed, 2 MB for mmosBalanced (the default), 1 MB for
mmosOptimizeForLowMemoryUsage (FastMM5's: 4, 3 and 1.5 MB).}
procedure FastMM_SetOptimizationStrategy(AStrategy: TFastMM_MemoryManagerOptimizationStrategy);
function FastMM_GetCurrentOptimizationStrategy: TFastMM_MemoryManagerOptimizationStrategy;
{Requests nest and are counted as in FastMM5; the coarsest outstanding one is in effect: every
block handed out from then on, of every kind, is aligned to it. Every block is 16-byte aligned
anyway, on Win32 too, so the alignment in effect is never below maa16Bytes. The DLL's alignment is
the process's: a library that shares it and enters or exits a request sets it for everyone.}
procedure FastMM_EnterMinimumAddressAlignment(AMinimumAddressAlignment: TFastMM_MinimumAddressAlignment);
procedure FastMM_ExitMinimumAddressAlignment(AMinimumAddressAlignment: TFastMM_MinimumAddressAlignment);
function FastMM_GetCurrentMinimumAddressAlignment: TFastMM_MinimumAddressAlignment;
{A limit on the memory the DLL takes from the OS, in bytes (0: none). Past it allocations fail
as when the OS has no memory left: EOutOfMemory.}
procedure FastMM_SetMemoryUsageLimit(AMaximumAllowedMemoryUsage: NativeUInt);
function FastMM_GetMemoryUsageLimit: NativeUInt;
{Loads FastMM_DebugSupportLibraryName and points FastMM_GetStackTrace and
FastMM_ConvertStackTraceToText at its routines where they are still the no-op ones; True when
it is loaded. FastMM_FreeDebugSupportLibrary points them back and unloads it. The DLL takes its
debug blocks' stack traces through FastMM_GetStackTrace while it is not the no-op routine (its
own stack walk otherwise, which needs no support library), and the unit writes them through
FastMM_ConvertStackTraceToText (as module+offset while it is the no-op routine).}
function FastMM_LoadDebugSupportLibrary: Boolean;
function FastMM_FreeDebugSupportLibrary: Boolean;

{------------------------Debug mode (FastMM5)------------------------}
{The DLL's debug mode (include/fastmm.h): while it is on, new blocks are FastMM5's debug blocks
(TFastMM_DebugBlockHeader before the data, the footer checksum and both stack traces after it);
freed ones are filled with $80 and kept in a quarantine, which counts as free memory. Calls
nest: the counter changes whatever the result, and the mode follows it when this module's memory
manager is still installed (FastMM5: False and the mode unchanged when another memory manager
was installed since, or fastmm-c is not installed). Errors and the leak report of debug blocks
are FastMM5's events, written as the FastMM_*Events sets say.}
function FastMM_EnterDebugMode: Boolean;
function FastMM_ExitDebugMode: Boolean;
function FastMM_DebugModeActive: Boolean;
{Default [dmoNeverFreeSmallBlockSpans, dmoNeverMergeFreeMediumBlocks]. The DLL applies them to
the debug blocks made and freed from then on: dmoNoBlockFillPatterns, dmoNoBlockCheckSums as in
FastMM5; the two others are accepted and returned, and have no effect: freed debug blocks wait
in the DLL's quarantine instead, which keeps their memory from reuse (docs/debug-mode.md says more).}
function FastMM_GetDebugModeOptions: TFastMM_DebugModeOptions;
procedure FastMM_SetDebugModeOptions(ADebugModeOptions: TFastMM_DebugModeOptions);
{Fill new blocks with $90 / freed blocks with $80, outside debug mode too. Calls nest, with the
same rules as FastMM_EnterDebugMode.}
function FastMM_BeginEraseAllocatedBlockContent: Boolean;
function FastMM_EndEraseAllocatedBlockContent: Boolean;
function FastMM_EraseAllocatedBlockContentActive: Boolean;
function FastMM_BeginEraseFreedBlockContent: Boolean;
function FastMM_EndEraseFreedBlockContent: Boolean;
function FastMM_EraseFreedBlockContentActive: Boolean;
{Default 20, at most 64 (a larger count is taken as 64).}
function FastMM_GetDebugModeStackTraceEntryCount: Byte;
procedure FastMM_SetDebugModeStackTraceEntryCount(AStackTraceEntryCount: Byte);
{The no-op stack trace routines: the first fills AMaxDepth entries with 0, the second writes
nothing and returns APBufferPosition.}
procedure FastMM_NoOpGetStackTrace(APReturnAddresses: PNativeUInt; AMaxDepth, ASkipFrames: Cardinal);
function FastMM_NoOpConvertStackTraceToText(APReturnAddresses: PNativeUInt; AMaxDepth: Cardinal;
  APBufferPosition, APBufferEnd: PWideChar): PWideChar;

{------------------------Event log (FastMM5)------------------------}
procedure FastMM_SetDefaultEventLogFilename;
procedure FastMM_SetEventLogFilename(APEventLogFilename: PWideChar);
function FastMM_GetEventLogFilename: PWideChar;
function FastMM_DeleteEventLogFile: Boolean;

{------------------------fastmm-c's own------------------------}
{True when this module's memory manager is fastmm-c (installed or shared).}
function FastMMC_Installed: Boolean;
{The loaded DLL's module handle, 0 if it is not loaded.}
function FastMMC_DLLHandle: NativeUInt;
{True if APointer is the start of a live block of the DLL.}
function FastMMC_OwnsBlock(APointer: Pointer): Boolean;
{What the DLL holds (fastmm_get_state). False when the DLL is not loaded.}
function FastMMC_GetState(var AState: TFastMMC_State): Boolean;
{Checks every span, block and free list; 0 when consistent (fastmm_check_heap), -1 when the DLL
is not loaded.}
function FastMMC_CheckHeap: Integer;
{The calling thread's cached free blocks back to the shared heap.}
procedure FastMMC_FlushThreadCache;
{Spare spans back to the OS.}
procedure FastMMC_ReleaseFreeMemory;
{Sets FastMM_DebugMode_ScanForCorruptionBeforeEveryOperation (a plain setter: the DLL reads the
variable of the module that installed it first; in another module the unit passes the value to
the DLL's own switch, here and at FastMM_EnterDebugMode and FastMM_ScanDebugBlocksForCorruption).}
procedure FastMMC_SetScanForCorruptionBeforeEveryOperation(AValue: Boolean);
{Reports the live debug blocks not registered as expected leaks now, returning how many there
were: each as FastMM5's mmetUnexpectedMemoryLeakDetail (written as the FastMM_*Events sets say)
when this module took the DLL's events, else to the DLL's event log. A program that never
called it gets the same at its end when it asks for leak reports (FastMM5's
FastMM_EnableMemoryLeakReporting, ReportMemoryLeaksOnShutdown).}
function FastMMC_ReportDebugBlockLeaks: NativeUInt;
{How many debug events of a kind the DLL has reported (include/fastmm.h, FASTMM_EVENT_*: 1
header corrupted, 2 footer corrupted, 3 write after free, 4 double free, 5 realloc of a freed
block, 6 invalid pointer, 7 leak, 8 virtual call on a freed object).}
function FastMMC_GetDebugEventCount(AKind: Integer): NativeUInt;
{The memory manager this unit replaced (and hands foreign blocks to).}
procedure FastMMC_GetPreviousMemoryManager(var AMemoryManager: TFastMMC_RTLMemoryManager);

var
  {------------------------FastMM5's variables------------------------}

  {The stack trace routines (FastMM_NoOpGetStackTrace / FastMM_NoOpConvertStackTraceToText
  until the program or FastMM_LoadDebugSupportLibrary sets others). FastMM_EnterDebugMode
  tries FastMM_LoadDebugSupportLibrary the first time while either is still the no-op one.}
  FastMM_GetStackTrace: TFastMM_GetStackTrace;
  FastMM_ConvertStackTraceToText: TFastMM_ConvertStackTraceToText;
  {The routines of the loaded support library (nil while none is loaded).}
  DebugLibrary_GetRawStackTrace: TFastMM_GetStackTrace;
  DebugLibrary_GetFrameBasedStackTrace: TFastMM_GetStackTrace;
  DebugLibrary_LogStackTrace_Legacy: TFastMM_LegacyConvertStackTraceToText;
  FastMM_DebugSupportLibraryName: PWideChar = CFastMM_DefaultDebugSupportLibraryName;

  {True: FastMM_Finalize does not uninstall (new blocks keep coming from the DLL after it).}
  FastMM_NeverUninstall: Boolean = False;
  {FastMM5's variables from here to FastMM_LargeBlockThreadContentionCount, and
  FastMM_GetStackTrace / FastMM_ConvertStackTraceToText above, are read and updated by the DLL
  itself, as FastMM5 uses its own: the module that installs fastmm-c first (the owner,
  FastMM_GetInstallationState = mmisInstalled) hands their addresses to the DLL
  (fastmm_bind_variables) until its FastMM_Finalize. In a module that shares another module's
  installation they are this module's copies, which the DLL does not see.}
  {While True, every mapping the DLL makes comes from the top of the address space down
  (MEM_TOP_DOWN), read at each mapping.}
  FastMM_AllocateTopDown: Boolean = False;
  {Scan every debug block before each GetMem, FreeMem, ReallocMem and AllocMem while debug mode
  is on, and before each FastMM_Debug* call.}
  FastMM_DebugMode_ScanForCorruptionBeforeEveryOperation: Boolean = False;

  {Where events go. The defaults are FastMM5's: installation problems and debug block errors
  everywhere, leaks nowhere unless asked for (ReportMemoryLeaksOnShutdown or
  FastMM_EnableMemoryLeakReporting). A console program gets its "message boxes" on standard
  error. The unit's events (installation, leak summary) follow these sets, and so do the DLL's
  debug block events, which the DLL hands to the owner module's unit (fastmm_set_event_handler):
  the unit writes them with the templates below. (A DLL event FastMM5 has no type for, a FreeMem
  of a pointer that is no block, is counted by the DLL and not written.)}
  FastMM_OutputDebugStringEvents: TFastMM_MemoryManagerEventTypeSet = [mmetDebugBlockDoubleFree,
    mmetDebugBlockReallocOfFreedBlock, mmetDebugBlockHeaderCorruption, mmetDebugBlockFooterCorruption,
    mmetDebugBlockModifiedAfterFree, mmetVirtualMethodCallOnFreedObject, mmetAnotherThirdPartyMemoryManagerAlreadyInstalled,
    mmetCannotInstallAfterDefaultMemoryManagerHasBeenUsed, mmetCannotSwitchToSharedMemoryManagerWithLivePointers];
  FastMM_LogToFileEvents: TFastMM_MemoryManagerEventTypeSet = [mmetDebugBlockDoubleFree,
    mmetDebugBlockReallocOfFreedBlock, mmetDebugBlockHeaderCorruption, mmetDebugBlockFooterCorruption,
    mmetDebugBlockModifiedAfterFree, mmetVirtualMethodCallOnFreedObject, mmetAnotherThirdPartyMemoryManagerAlreadyInstalled,
    mmetCannotInstallAfterDefaultMemoryManagerHasBeenUsed, mmetCannotSwitchToSharedMemoryManagerWithLivePointers];
  FastMM_MessageBoxEvents: TFastMM_MemoryManagerEventTypeSet = [mmetDebugBlockDoubleFree,
    mmetDebugBlockReallocOfFreedBlock, mmetDebugBlockHeaderCorruption, mmetDebugBlockFooterCorruption,
    mmetDebugBlockModifiedAfterFree, mmetVirtualMethodCallOnFreedObject, mmetAnotherThirdPartyMemoryManagerAlreadyInstalled,
    mmetCannotInstallAfterDefaultMemoryManagerHasBeenUsed, mmetCannotSwitchToSharedMemoryManagerWithLivePointers];

  {Each new debug block records FastMM_CurrentAllocationGroup (AllocationGroup) and the number
  FastMM_LastAllocationNumber is incremented to (AllocationNumber: debug allocations counted from
  1, wrapping at 2^32); the block numbered FastMM_DebugBreakAllocationNumber (when not 0) breaks
  into the debugger once made (DebugBreak: without a debugger, an unhandled breakpoint
  exception).}
  FastMM_CurrentAllocationGroup: Cardinal;
  FastMM_LastAllocationNumber: Cardinal;
  FastMM_DebugBreakAllocationNumber: Cardinal;
  {How often a GetMem or ReallocMem found every arena of a kind locked and had to wait.}
  FastMM_SmallBlockThreadContentionCount: Cardinal;
  FastMM_MediumBlockThreadContentionCount: Cardinal;
  FastMM_LargeBlockThreadContentionCount: Cardinal;

  FastMM_TextFileEncoding: TFastMM_TextFileEncoding = teUTF8;

  {The texts of the unit's reports, FastMM5's templates: a token number in braces is replaced by
  the token's value (an unknown or unset token is empty). The unit fills 1 (date, yyyy-mm-dd),
  2 (time, HH:nn:ss), 14 (the leak summary's entries), 16 (the event log's path), 18
  (kilobytes allocated), 19 (kilobytes of overhead) and 20 (efficiency percentage); for a debug
  block event from the DLL also 3 (the block's size), 4 (allocated by thread), 5 (freed by
  thread), 6 and 7 (the allocation and free stack traces, through
  FastMM_ConvertStackTraceToText, else as module+offset), 8 (the object class, or string type, or
  Unknown), 9 (allocation number), 10-13 (the size, address, hex and ASCII dump of the block's
  first bytes), 15 (the offsets and lengths changed after the free), 17 (the virtual method
  called on a freed object), 24 (the stack trace of that call), 25 and 26 (the allocation's date
  and time); for the leak report 3, 8 and 10-13 of each leaked block, and for the state log 21-23
  (usage per class), from the DLL's walk of its blocks.}
  FastMM_LogFileEntryHeader: PWideChar = '--------------------------------{1} {2}--------------------------------'#13#10;
  FastMM_CannotInstallAfterDefaultMemoryManagerHasBeenUsedMessage: PWideChar =
    'fastmm-c was not installed: the default memory manager has allocated memory already.';
  FastMM_CannotSwitchToSharedMemoryManagerWithLivePointersMessage: PWideChar =
    'The shared memory manager cannot be used: this module''s memory manager has live blocks.';
  FastMM_AnotherMemoryManagerAlreadyInstalledMessage: PWideChar =
    'fastmm-c was not installed: another memory manager is already installed in this module.';
  FastMM_CannotSwitchMemoryManagerMessageBoxCaption: PWideChar = 'Cannot Switch Memory Managers';
  FastMM_MemoryLeakDetailMessage_NormalBlock: PWideChar = 'A block of {3} bytes was still allocated at exit.'#13#10
    + 'Object class: {8}'#13#10'The first {10} bytes at {11}:'#13#10'{12}'#13#10'{13}'#13#10;
  FastMM_MemoryLeakDetailMessage_DebugBlock: PWideChar = 'A block of {3} bytes was still allocated at exit.'#13#10
    + 'Allocated on {25} {26} by thread {4}, number {9}, at:{6}'#13#10'Object class: {8}'#13#10
    + 'The first {10} bytes at {11}:'#13#10'{12}'#13#10'{13}'#13#10;
  FastMM_MemoryLeakSummaryMessage_LeakDetailNotLogged: PWideChar =
    'This application has leaked memory: blocks were still allocated at exit.'#13#10'{14}'#13#10;
  FastMM_MemoryLeakSummaryMessage_LeakDetailLoggedToEventLog: PWideChar =
    'This application has leaked memory: blocks were still allocated at exit.'#13#10'{14}'#13#10
    + 'This report is in {16}'#13#10;
  FastMM_MemoryLeakMessageBoxCaption: PWideChar = 'Unexpected Memory Leak';
  FastMM_DebugBlockDoubleFree: PWideChar = 'A block of {3} bytes was freed twice.'#13#10
    + 'Allocated on {25} {26} by thread {4}, number {9}, at:{6}'#13#10'Freed by thread {5} at:{7}'#13#10;
  FastMM_DebugBlockReallocOfFreedBlock: PWideChar = 'A freed block of {3} bytes was resized.'#13#10
    + 'Allocated on {25} {26} by thread {4}, number {9}, at:{6}'#13#10'Freed by thread {5} at:{7}'#13#10;
  FastMM_BlockModifiedAfterFreeMessage: PWideChar = 'A block of {3} bytes was written to after it was freed, '
    + 'at offsets (lengths): {15}.'#13#10'Allocated on {25} {26} by thread {4}, number {9}, at:{6}'#13#10
    + 'Freed by thread {5} at:{7}'#13#10'The first {10} bytes at {11}:'#13#10'{12}'#13#10'{13}'#13#10;
  FastMM_BlockHeaderCorruptedMessage: PWideChar = 'The header of a debug block is damaged.'#13#10
    + 'The first {10} bytes at {11}:'#13#10'{12}'#13#10'{13}'#13#10;
  FastMM_BlockFooterCorruptedMessage_AllocatedBlock: PWideChar = 'The bytes after a block of {3} bytes were '
    + 'overwritten.'#13#10'Allocated on {25} {26} by thread {4}, number {9}, at:{6}'#13#10
    + 'The first {10} bytes at {11}:'#13#10'{12}'#13#10'{13}'#13#10;
  FastMM_BlockFooterCorruptedMessage_FreedBlock: PWideChar = 'The bytes after a freed block of {3} bytes were '
    + 'overwritten.'#13#10'Allocated on {25} {26} by thread {4}, number {9}, at:{6}'#13#10
    + 'Freed by thread {5} at:{7}'#13#10'The first {10} bytes at {11}:'#13#10'{12}'#13#10'{13}'#13#10;
  FastMM_MemoryCorruptionMessageBoxCaption: PWideChar = 'Memory Corruption Detected';
  FastMM_VirtualMethodCallOnFreedObjectMessage: PWideChar = 'The virtual method {17} was called on a freed '
    + 'object of class {8} ({3} bytes).'#13#10'Allocated on {25} {26} by thread {4}, number {9}, at:{6}'#13#10
    + 'Freed by thread {5} at:{7}'#13#10'Called at:{24}'#13#10;
  FastMM_VirtualMethodCallOnFreedObjectMessageBoxCaption: PWideChar = 'Virtual Method Call On Freed Object';
  FastMM_LogStateToFileTemplate: PWideChar = 'FastMM State Capture:'#13#10'---------------------'#13#10#13#10
    + 'Timestamp:'#13#10'{1} {2}'#13#10#13#10'Usage Summary:'#13#10'{18}K Allocated'#13#10'{19}K Overhead'#13#10
    + '{20}% Efficiency'#13#10#13#10'Usage Detail:'#13#10;
  FastMM_LogStateToFileTemplate_UsageDetail: PWideChar = '{21} bytes: {8} x {22} ({23} bytes avg.)'#13#10;

{$ifdef FPC}
  {Delphi's System.ReportMemoryLeaksOnShutdown, which Free Pascal does not have: set it to True
  to get the leak summary at exit.}
  ReportMemoryLeaksOnShutdown: Boolean = False;
{$endif}

implementation

{The body is in include files, one topic each, in the order their declarations need.}

{$ifdef FMMC_POSIX}
  {$I FastMMC.Posix.inc}
  {$ifdef FMMC_STATIC}
    {$I FastMMC.Static.inc}
  {$endif}
{$else}
  {$I FastMMC.Windows.inc}
{$endif}
var
  UnitInitialized: Boolean;
  InstallationState: TFastMM_MemoryManagerInstallationState = mmisDefaultMemoryManagerInUse;
  {The first module of the process to install fastmm-c owns the leak report: the others share
  its heap, and blocks they see at their own exit may belong to modules still running.}
  IsOwner: Boolean;
  OwnerMapping: NativeUInt;

  EventLogFilename: array[0..CMaxPath] of WideChar;

{$I FastMMC.Text.inc}
{$I FastMMC.Dll.inc}
{$I FastMMC.ExpectedLeaks.inc}
{$I FastMMC.Records.inc}
{$I FastMMC.Blocks.inc}
{$I FastMMC.Diagnostics.inc}
{$I FastMMC.Debug.inc}
{$I FastMMC.FastMM5.inc}

{$ifdef FMMC_POSIX}
{Linux, loaded: the first module of the process to install fastmm-c sets FASTMMC_OWNER_PID to the
process's id and 8 of the random bytes the kernel gives each program it starts (AT_RANDOM); a
module that finds the same value there shares. A child process (fork: another id; exec, even of
the same process: other random bytes) is the owner of its own heap. Linked in (FASTMMC_STATIC):
each module has a heap of its own, and owns it.}
{$ifdef FMMC_STATIC}
procedure ClaimOwnership;
begin
  IsOwner := True;
end;
{$else}
procedure ClaimOwnership;
var
  Value: array[0..47] of AnsiChar;
  Id: ShortString;
  Current: PAnsiChar;
  I: Integer;
begin
  Id := HexText(FMMC_GetCurrentProcessId, 8) + '-' + HexText(FMMC_ProgramStartToken, 16);
  for I := 1 to Length(Id) do
    Value[I - 1] := Id[I];
  Value[Length(Id)] := #0;
  Current := c_getenv('FASTMMC_OWNER_PID');
  IsOwner := True;
  if Current <> nil then
  begin
    I := 0;
    while (Value[I] <> #0) and (Current[I] = Value[I]) do
      Inc(I);
    IsOwner := not ((Value[I] = #0) and (Current[I] = #0));
  end;
  if IsOwner then
    c_setenv('FASTMMC_OWNER_PID', @Value[0], 1);
end;
{$endif}
{$else}
{The first module of the process to install fastmm-c creates a named mapping; the others find
it there.}
procedure ClaimOwnership;
var
  Name: array[0..63] of WideChar;
  N: Integer;
begin
  N := 0;
  WideAppendAscii(Name, N, 'Local\FastMMC_PID_' + HexText(FMMC_GetCurrentProcessId, 8));
  OwnerMapping := FMMC_CreateFileMappingW(CInvalidHandle, nil, CPageReadWrite, 0, 64, @Name[0]);
  IsOwner := (OwnerMapping <> 0) and (FMMC_GetLastError <> CErrorAlreadyExists);
  if (OwnerMapping <> 0) and not IsOwner then
  begin
    FMMC_CloseHandle(OwnerMapping);
    OwnerMapping := 0;
  end;
end;
{$endif}

{$I FastMMC.LeakReport.inc}

var
  BoundVariables: TFMMC_PascalVariables;
  EventHandlerSet: Boolean;

{The address of a variable, in Delphi and in both of Free Pascal's modes (in mode delphi @ on a
procedure variable gives its value).}
function AddressOf(var AVariable): Pointer;
begin
  Result := @AVariable;
end;

{The owner hands its FastMM5 variables and its event handler to the DLL; with an older DLL
(no such exports) the interim behaviour stays.}
procedure BindToDll;
begin
  if DllHas(Dll.BindVariables) then
  begin
    FillChar(BoundVariables, SizeOf(BoundVariables), 0);
    BoundVariables.Size := SizeOf(BoundVariables);
    BoundVariables.CurrentAllocationGroup := @FastMM_CurrentAllocationGroup;
    BoundVariables.LastAllocationNumber := @FastMM_LastAllocationNumber;
    BoundVariables.DebugBreakAllocationNumber := @FastMM_DebugBreakAllocationNumber;
    BoundVariables.SmallBlockThreadContentionCount := @FastMM_SmallBlockThreadContentionCount;
    BoundVariables.MediumBlockThreadContentionCount := @FastMM_MediumBlockThreadContentionCount;
    BoundVariables.LargeBlockThreadContentionCount := @FastMM_LargeBlockThreadContentionCount;
    BoundVariables.AllocateTopDown := PByte(@FastMM_AllocateTopDown);
    BoundVariables.ScanBeforeEveryOperation := PByte(@FastMM_DebugMode_ScanForCorruptionBeforeEveryOperation);
    BoundVariables.GetStackTrace := AddressOf(FastMM_GetStackTrace);
    BoundVariables.ConvertStackTraceToText := AddressOf(FastMM_ConvertStackTraceToText);
    BoundVariables.NoOpGetStackTrace := Pointer(@FastMM_NoOpGetStackTrace);
    BoundVariables.NoOpConvertStackTraceToText := Pointer(@FastMM_NoOpConvertStackTraceToText);
    Dll.BindVariables(@BoundVariables);
    VariablesBound := True;
    {The DLL's own switch gives way to the variable.}
    Dll.SetScanBeforeEveryOperation(0);
  end;
  if DllHas(Dll.SetEventHandler) then
  begin
    Dll.SetEventHandler(Pointer(@DllEventHandler));
    EventHandlerSet := True;
    {The unit reports leaks at its finalization, as FastMM5's routing says.}
    Dll.SetLeakReportAtExit(0);
  end;
  Dll.SetFreedObjectHandler(Pointer(@DllFreedObjectHandler));
end;

{Before this module's code and data go (FastMM_Finalize): the DLL back to its own variables, its
own event log and its own end for a call on a freed object.}
procedure UnbindFromDll;
begin
  if VariablesBound then
  begin
    Dll.BindVariables(nil);
    VariablesBound := False;
  end;
  if EventHandlerSet then
  begin
    Dll.SetEventHandler(nil);
    EventHandlerSet := False;
  end;
  Dll.SetFreedObjectHandler(nil);
end;

{The debug blocks still live, one mmetUnexpectedMemoryLeakDetail each (the DLL's report through
the handler), those registered as expected by pointer, class or size left out.}
procedure ReportDebugBlockLeakDetails;
begin
  if EventHandlerSet and DllHas(Dll.ReportLeaks) then
  begin
    Dll.ReportLeaks();
    DebugLeakDetailsWritten := True;
  end;
end;

{------------------------Installation------------------------}

procedure ApplyConditionalDefines;
begin
{$ifdef FastMM_ClearLogFileOnStartup}
  FastMM_DeleteEventLogFile;
{$endif}
{$ifdef FastMM_Align16Bytes}
  FastMM_EnterMinimumAddressAlignment(maa16Bytes);
{$endif}
{$ifdef FastMM_EnableMemoryLeakReporting}
  if True
  {$ifdef FastMM_RequireDebuggerPresenceForLeakReporting}
    and FMMC_IsDebuggerPresent
  {$endif}
  {$ifdef FastMM_RequireIDEPresenceForLeakReporting}
    and (FMMC_FindWindowA('TAppBuilder', nil) <> 0)
  {$endif}
  then
  begin
    FastMM_LogToFileEvents := FastMM_LogToFileEvents + [mmetUnexpectedMemoryLeakDetail, mmetUnexpectedMemoryLeakSummary];
    FastMM_MessageBoxEvents := FastMM_MessageBoxEvents + [mmetUnexpectedMemoryLeakSummary];
  end;
{$endif}
{$ifdef FastMM_NoMessageBoxes}
  FastMM_MessageBoxEvents := [];
{$endif}
{$ifdef FastMM_NeverUninstall}
  FastMM_NeverUninstall := True;
{$endif}
{$ifdef FastMM_FullDebugMode}
  FastMM_EnterDebugMode;
{$endif}
end;

{$ifdef FMMC_POSIX}
const
  {The exit code of a program stopped because FastMMC is not first in its uses clause.}
  CFastMMC_WrongOrderExitCode = 70;

{A unit initialized before this one started a thread: its threads would run on the RTL's manager
while this one installs, and the program has FastMMC in the wrong place (it comes first; cthreads
may come before it). Said on standard error, and the program stops, rather than going on with
blocks of two managers shared between threads. It stops at once (_exit), without the units'
finalization: Halt ran it while the early threads still started or ended, and the RTL's own code
then raced with them (about 1 run in 100 ended with exit code 236 instead).}
procedure StopIfThreadsRunning;
var
  T: TFMMC_Text;
begin
  if not IsMultiThread then
    Exit;
  TextClear(T);
  TextAdd(T, 'FastMMC: a thread was started before FastMMC was initialized. Put FastMMC first in the ');
  TextAdd(T, 'program''s uses clause (cthreads may come before it; FastMMC uses cthreads itself).'#13#10);
  WriteStdErr(T);
  c_exit_now(CFastMMC_WrongOrderExitCode);
end;
{$endif}

function FastMM_Initialize: Boolean;
var
  T: TFMMC_Text;
  Tokens: TFMMC_Tokens;
  Name: array[0..CMaxPath] of WideChar;
  N: Integer;
begin
  Result := False;
  {Ignore attempts to initialize twice.}
  if UnitInitialized then
    Exit;
  UnitInitialized := True;
{$ifdef FMMC_POSIX}
  StopIfThreadsRunning;
{$endif}
  FastMM_SetDefaultEventLogFilename;
  if IsMemoryManagerSet then
  begin
    InstallationState := mmisOtherThirdPartyMemoryManagerInstalled;
    TokensStart(Tokens);
    TextClear(T);
    TextAddTemplate(T, FastMM_AnotherMemoryManagerAlreadyInstalledMessage, Tokens);
    LogEvent(mmetAnotherThirdPartyMemoryManagerAlreadyInstalled, FastMM_CannotSwitchMemoryManagerMessageBoxCaption, T);
    Exit;
  end;
  if not LoadDll then
  begin
    TextClear(T);
{$ifdef FMMC_POSIX}
    TextAdd(T, 'fastmm-c was not installed: ' + CFastMMC_DLLName + ' could not be loaded (');
    if DllLoadError = 127 then
      TextAdd(T, 'an export this unit needs is missing: the library is older than the unit')
    else
      TextAddAnsi(T, FMMC_LastLoadErrorText);
    TextAdd(T, '); it belongs beside ');
{$else}
    TextAdd(T, 'fastmm-c was not installed: ' + CFastMMC_DLLName + ' could not be loaded (Windows error ');
    TextAddUInt(T, DllLoadError);
    TextAdd(T, '); it belongs beside ');
{$endif}
    N := 0;
    if ModuleFolder(FMMC_ThisModule, Name) > 0 then
      TextAddWide(T, @Name[0])
    else
      TextAdd(T, 'the program');
    TextAdd(T, '. The default memory manager stays in use.');
    LogEvent(mmetAnotherThirdPartyMemoryManagerAlreadyInstalled, FastMM_CannotSwitchMemoryManagerMessageBoxCaption, T);
    Exit;
  end;
  InstallRecord;
  TellDllEventLogFilename(False);
  ClaimOwnership;
  {The owner gives the DLL FastMM5's variables and takes its debug events, until FastMM_Finalize.}
  if IsOwner then
    BindToDll;
  if IsOwner then
    InstallationState := mmisInstalled
  else
    InstallationState := mmisUsingSharedMemoryManager;
  ApplyConditionalDefines;
  Result := True;
end;

function FastMM_Finalize: Boolean;
begin
  Result := False;
  if not UnitInitialized then
    Exit;
  UnitInitialized := False;
  if FastMMC_Installed then
  begin
    if ReportMemoryLeaksOnShutdown then
      Include(FastMM_MessageBoxEvents, mmetUnexpectedMemoryLeakSummary);
    if IsOwner and ([mmetUnexpectedMemoryLeakDetail, mmetUnexpectedMemoryLeakSummary] *
      (FastMM_OutputDebugStringEvents + FastMM_LogToFileEvents + FastMM_MessageBoxEvents) <> []) then
    begin
      if mmetUnexpectedMemoryLeakDetail in FastMM_OutputDebugStringEvents + FastMM_LogToFileEvents +
        FastMM_MessageBoxEvents then
        ReportDebugBlockLeakDetails;
      PerformLeakCheck;
    end;
    if IsOwner then
      UnbindFromDll;
    if (not FastMM_NeverUninstall) and RecordStillOurs then
    begin
      UninstallRecord;
      InstallationState := mmisDefaultMemoryManagerInUse;
    end;
    if OwnerMapping <> 0 then
    begin
      FMMC_CloseHandle(OwnerMapping);
      OwnerMapping := 0;
    end;
  end;
  Result := True;
end;

function FastMM_GetInstallationState: TFastMM_MemoryManagerInstallationState;
begin
  Result := InstallationState;
end;

initialization
  DllUseStubs;
  FMMC_InitializeCriticalSection(ModeLock);
  FastMM_GetStackTrace := @FastMM_NoOpGetStackTrace;
  FastMM_ConvertStackTraceToText := @FastMM_NoOpConvertStackTraceToText;
{$ifndef FastMM_DisableAutomaticInstall}
  FastMM_Initialize;
{$endif}

finalization
{$ifndef FastMM_DisableAutomaticInstall}
  FastMM_Finalize;
{$endif}

end.
