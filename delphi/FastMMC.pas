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

{$ifdef FPC}
{$ifdef FASTMMC_DELPHI_BRANCH}
uses
  DelphiMemoryManager;
{$endif}
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
{$ifdef WIN64}
  CFastMMC_DLLName = 'fastmmc64.dll';
{$else}
  CFastMMC_DLLName = 'fastmmc32.dll';
{$endif}

  {The version of FastMM5's interface this unit follows (5.07).}
  CFastMM_Version = 507;
  {fastmm-c's arenas (src/policy.h, ARENA_COUNT): small and medium blocks come from 4 arenas, large
  blocks from one list. FastMM5's defines FastMM_5Arenas .. FastMM_16Arenas change nothing here:
  the DLL is built with its own count.}
  CFastMM_SmallBlockArenaCount = 4;
  CFastMM_MediumBlockArenaCount = 4;
  CFastMM_LargeBlockArenaCount = 1;
  {The default name of FastMM's debug support library (FastMM_LoadDebugSupportLibrary).}
{$ifdef WIN64}
  CFastMM_DefaultDebugSupportLibraryName = 'FastMM_FullDebugMode64.dll';
{$else}
  CFastMM_DefaultDebugSupportLibraryName = 'FastMM_FullDebugMode.dll';
{$endif}

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
{$ifdef WIN64}
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
{The class of the object at APointer (at least one pointer readable there), or nil: the first
pointer must be a VMT whose parent chain is valid readable memory.}
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

{------------------------Windows API (no Windows unit: nothing here may allocate early)------------------------}

const
  kernel32 = 'kernel32.dll';
  user32 = 'user32.dll';
  CInvalidHandle = High(NativeUInt);
  CGenericWrite = $40000000;
  CFileShareRead = 1;
  CCreateAlways = 2;
  COpenAlways = 4;
  CFileAttributeNormal = $80;
  CFileEnd = 2;
  CStdErrorHandle = Cardinal(-12);
  CPageReadWrite = 4;
  CErrorAlreadyExists = 183;
  CCodePageUTF8 = 65001;
  CMBOk_IconError_TaskModal = $00000010 or $00002000;
  CMaxPath = 1024;

type
  TFMMC_SystemTime = record
    Year, Month, DayOfWeek, Day, Hour, Minute, Second, Milliseconds: Word;
  end;
  {Room for a CRITICAL_SECTION (24 bytes on Win32, 40 on Win64).}
  TFMMC_CriticalSection = record
    Opaque: array[0..7] of NativeUInt;
  end;

function FMMC_LoadLibraryW(AFileName: PWideChar): NativeUInt; stdcall; external kernel32 name 'LoadLibraryW';
function FMMC_GetProcAddress(AModule: NativeUInt; AProcName: PAnsiChar): Pointer;
  stdcall; external kernel32 name 'GetProcAddress';
function FMMC_GetModuleFileNameW(AModule: NativeUInt; AFileName: PWideChar; ASize: Cardinal): Cardinal;
  stdcall; external kernel32 name 'GetModuleFileNameW';
function FMMC_GetLastError: Cardinal; stdcall; external kernel32 name 'GetLastError';
function FMMC_FreeLibrary(AModule: NativeUInt): LongBool; stdcall; external kernel32 name 'FreeLibrary';
function FMMC_CreateFileW(AFileName: PWideChar; AAccess, AShareMode: Cardinal; ASecurity: Pointer;
  ACreation, AFlags: Cardinal; ATemplate: NativeUInt): NativeUInt; stdcall; external kernel32 name 'CreateFileW';
function FMMC_WriteFile(AFile: NativeUInt; const ABuffer; ACount: Cardinal; var AWritten: Cardinal;
  AOverlapped: Pointer): LongBool; stdcall; external kernel32 name 'WriteFile';
function FMMC_CloseHandle(AHandle: NativeUInt): LongBool; stdcall; external kernel32 name 'CloseHandle';
function FMMC_SetFilePointer(AFile: NativeUInt; ADistance: Longint; ADistanceHigh: Pointer; AMethod: Cardinal): Cardinal;
  stdcall; external kernel32 name 'SetFilePointer';
function FMMC_GetStdHandle(AWhich: Cardinal): NativeUInt; stdcall; external kernel32 name 'GetStdHandle';
procedure FMMC_OutputDebugStringW(AText: PWideChar); stdcall; external kernel32 name 'OutputDebugStringW';
function FMMC_DeleteFileW(AFileName: PWideChar): LongBool; stdcall; external kernel32 name 'DeleteFileW';
function FMMC_GetEnvironmentVariableW(AName, ABuffer: PWideChar; ASize: Cardinal): Cardinal;
  stdcall; external kernel32 name 'GetEnvironmentVariableW';
function FMMC_GetCurrentProcessId: Cardinal; stdcall; external kernel32 name 'GetCurrentProcessId';
function FMMC_CreateFileMappingW(AFile: NativeUInt; AAttributes: Pointer; AProtect, ASizeHigh, ASizeLow: Cardinal;
  AName: PWideChar): NativeUInt; stdcall; external kernel32 name 'CreateFileMappingW';
function FMMC_WideCharToMultiByte(ACodePage, AFlags: Cardinal; AWide: PWideChar; AWideCount: Integer;
  AMulti: PAnsiChar; AMultiCount: Integer; ADefault: PAnsiChar; AUsedDefault: Pointer): Integer;
  stdcall; external kernel32 name 'WideCharToMultiByte';
function FMMC_MultiByteToWideChar(ACodePage, AFlags: Cardinal; AMulti: PAnsiChar; AMultiCount: Integer;
  AWide: PWideChar; AWideCount: Integer): Integer; stdcall; external kernel32 name 'MultiByteToWideChar';
procedure FMMC_GetLocalTime(var ATime: TFMMC_SystemTime); stdcall; external kernel32 name 'GetLocalTime';
procedure FMMC_InitializeCriticalSection(var ASection: TFMMC_CriticalSection);
  stdcall; external kernel32 name 'InitializeCriticalSection';
procedure FMMC_EnterCriticalSection(var ASection: TFMMC_CriticalSection);
  stdcall; external kernel32 name 'EnterCriticalSection';
procedure FMMC_LeaveCriticalSection(var ASection: TFMMC_CriticalSection);
  stdcall; external kernel32 name 'LeaveCriticalSection';
function FMMC_MessageBoxW(AWnd: NativeUInt; AText, ACaption: PWideChar; AType: Cardinal): Integer;
  stdcall; external user32 name 'MessageBoxW';
function FMMC_FindWindowA(AClassName, AWindowName: PAnsiChar): NativeUInt; stdcall; external user32 name 'FindWindowA';
function FMMC_IsDebuggerPresent: LongBool; stdcall; external kernel32 name 'IsDebuggerPresent';
function FMMC_GetModuleHandleExW(AFlags: Cardinal; AAddress: Pointer; var AModule: NativeUInt): LongBool;
  stdcall; external kernel32 name 'GetModuleHandleExW';
function FMMC_GetTickCount: Cardinal; stdcall; external kernel32 name 'GetTickCount';
{Pointers: a const parameter may travel by value.}
function FMMC_SystemTimeToFileTime(ATime: Pointer; AFileTime: Pointer): LongBool;
  stdcall; external kernel32 name 'SystemTimeToFileTime';
function FMMC_FileTimeToSystemTime(AFileTime: Pointer; ATime: Pointer): LongBool;
  stdcall; external kernel32 name 'FileTimeToSystemTime';

{------------------------The DLL------------------------}

type
  {fastmm_memory_manager_ex: on Win32 the entries use the register convention, which is also
  the default convention of Delphi and of Free Pascal's i386 target; Win64 has one convention.}
  TDllMemoryManager = record
    GetMem: function(ASize: NativeInt): Pointer;
    FreeMem: function(APointer: Pointer): Integer;
    ReallocMem: function(APointer: Pointer; ASize: NativeInt): Pointer;
    AllocMem: function(ASize: NativeInt): Pointer;
    RegisterExpectedMemoryLeak: function(APointer: Pointer): Boolean;
    UnregisterExpectedMemoryLeak: function(APointer: Pointer): Boolean;
  end;

  {The bindings the DLL's slow paths use for what is not theirs
  (fastmm_get_memory_manager_with_previous, fastmm_get_fpc_memory_manager): the previous
  manager's entries, for the blocks it handed out before the install, and the unit's HeapError,
  which raises EInvalidPointer / EOutOfMemory from there.}
  TDll_HeapError = procedure(ACode: Longint; AAddress: Pointer); cdecl;
  TDllDelphiBindings = record
    Size: NativeUInt;
    PreviousFreeMem: function(APointer: Pointer): Integer;
    PreviousReallocMem: function(APointer: Pointer; ASize: NativeInt): Pointer;
    HeapError: TDll_HeapError;
  end;
  {fastmm_fpc_memory_manager: Free Pascal's TMemoryManager from GetMem to MemSize.}
  TDllFpcMemoryManager = record
    GetMem: function(ASize: PtrUInt): Pointer;
    FreeMem: function(APointer: Pointer): PtrUInt;
    FreeMemSize: function(APointer: Pointer; ASize: PtrUInt): PtrUInt;
    AllocMem: function(ASize: PtrUInt): Pointer;
    ReAllocMem: function(var APointer: Pointer; ASize: PtrUInt): Pointer;
    MemSize: function(APointer: Pointer): PtrUInt;
  end;
  TDllFpcBindings = record
    Size: NativeUInt;
    PreviousFreeMem: function(APointer: Pointer): PtrUInt;
    PreviousReAllocMem: function(var APointer: Pointer; ASize: PtrUInt): Pointer;
    PreviousMemSize: function(APointer: Pointer): PtrUInt;
    PreviousGetMem: function(ASize: PtrUInt): Pointer;
    HeapError: TDll_HeapError;
    ReturnNilIfGrowHeapFails: PBoolean;
    AllocateFromLibrary: PBoolean;
  end;

  {The C exports (cdecl).}
  TDll_UsableSize = function(APointer: Pointer): NativeUInt; cdecl;
  TDll_OwnsBlock = function(APointer: Pointer): Integer; cdecl;
  TDll_GetState = procedure(var AState: TFastMMC_State); cdecl;
  TDll_CheckHeap = function: Integer; cdecl;
  TDll_Procedure = procedure; cdecl;
  TDll_SmallClassSlotSize = function(AClassIndex: NativeUInt): NativeUInt; cdecl;
  TDll_GetMemoryManager = procedure(var AManager: TDllMemoryManager); cdecl;
  TDll_IntFunction = function: Integer; cdecl;
  TDll_SetSize = procedure(AValue: NativeUInt); cdecl;
  TDll_GetSize = function: NativeUInt; cdecl;
  TDll_SetInt = procedure(AValue: Integer); cdecl;
  TDll_SetText = procedure(AText: PAnsiChar); cdecl;
  TDll_ReportLeaks = function: NativeUInt; cdecl;
  TDll_EventCount = function(AKind: Integer): NativeUInt; cdecl;
  TDll_SmallClassUsage = function(AOut: Pointer; ACount: NativeUInt): NativeUInt; cdecl;
  {fastmm_block_info: what fastmm_walk_blocks reports of a block (no padding on either target).}
  TDll_BlockInfo = packed record
    BlockAddress: Pointer;
    DebugHeader: Pointer;
    BlockSize: NativeUInt;
    UsableSize: NativeUInt;
    AllocationGroup: Cardinal;
    ArenaIndex: Byte;
    BlockType: Byte;
    BlockIsFree: Byte;
    IsSequentialFeedSpan: Byte;
    SequentialFeedUnusedBytes: Cardinal;
    SmallBlockSpanBlockSize: Cardinal;
  end;
  PDll_BlockInfo = ^TDll_BlockInfo;
  TDll_WalkCallback = procedure(AInfo: PDll_BlockInfo; AUserData: Pointer); cdecl;
  TDll_WalkBlocks = function(ACallback: TDll_WalkCallback; AUserData: Pointer; ATypes: Cardinal;
    AUsedBlocksOnly: Integer; ALockTimeoutMilliseconds, AMinimumAllocationGroup,
    AMaximumAllocationGroup: Cardinal): Integer; cdecl;
  TDll_SizeFunction = function(AValue: NativeUInt): NativeUInt; cdecl;
  TDll_WriteReport = function(APath: PAnsiChar): Integer; cdecl;
  TDll_DebugGetMem = function(ASize: NativeInt): Pointer; cdecl;
  TDll_DebugFreeMem = function(APointer: Pointer): Integer; cdecl;
  TDll_DebugReallocMem = function(APointer: Pointer; ASize: NativeInt): Pointer; cdecl;
  TDll_SetCardinal = procedure(AValue: Cardinal); cdecl;
  TDll_SetPointer = procedure(AValue: Pointer); cdecl;

  {fastmm_pascal_variables (include/fastmm.h): the addresses of FastMM5's variables, which the DLL
  reads and updates from then on.}
  TFMMC_PascalVariables = packed record
    Size: Cardinal;
{$ifdef WIN64}
    Padding: Cardinal;
{$endif}
    CurrentAllocationGroup: PCardinal;
    LastAllocationNumber: PCardinal;
    DebugBreakAllocationNumber: PCardinal;
    SmallBlockThreadContentionCount: PCardinal;
    MediumBlockThreadContentionCount: PCardinal;
    LargeBlockThreadContentionCount: PCardinal;
    AllocateTopDown: PByte;
    ScanBeforeEveryOperation: PByte;
    GetStackTrace: Pointer;
    ConvertStackTraceToText: Pointer;
    NoOpGetStackTrace: Pointer;
    NoOpConvertStackTraceToText: Pointer;
  end;

  {fastmm_debug_event (include/fastmm.h): one debug event as the DLL hands it to the unit. The C
  struct has no padding before its end, so a packed record matches it on both targets.}
  TFMMC_DebugModifiedRange = packed record
    Offset: Cardinal;
    Length: Cardinal;
  end;
  PFMMC_DebugEvent = ^TFMMC_DebugEvent;
  TFMMC_DebugEvent = packed record
    Kind: Integer;
    VirtualMethodIndex: Integer;
    AllocationNumber: UInt64;
    Block: Pointer;
    UserSize: NativeUInt;
    DebugHeader: PFastMM_DebugBlockHeader;
    AllocFrameCount: NativeUInt;
    FreeFrameCount: NativeUInt;
    CallFrameCount: NativeUInt;
    ModifiedRangeCount: NativeUInt;
    AllocFrames: array[0..63] of Pointer;
    FreeFrames: array[0..63] of Pointer;
    CallFrames: array[0..63] of Pointer;
    ModifiedRanges: array[0..31] of TFMMC_DebugModifiedRange;
    Header: TFastMM_DebugBlockHeader;
  end;
  {The bindings go by reference (var): a const record would go by value under cdecl on Win32.}
  TDll_GetMemoryManagerWithPrevious = function(var AManager: TDllMemoryManager;
    var ABindings: TDllDelphiBindings): Integer; cdecl;
  TDll_GetFpcMemoryManager = function(var AManager: TDllFpcMemoryManager;
    var ABindings: TDllFpcBindings): Integer; cdecl;

var
  Dll: record
    Handle: NativeUInt;
    MM: TDllMemoryManager;
    UsableSize: TDll_UsableSize;
    OwnsBlock: TDll_OwnsBlock;
    HeapContains: TDll_OwnsBlock;
    GetState: TDll_GetState;
    CheckHeap: TDll_CheckHeap;
    FlushThreadCache: TDll_Procedure;
    ReleaseFreeMemory: TDll_Procedure;
    SmallClassSlotSize: TDll_SmallClassSlotSize;
    {Later additions: nil when the DLL is older than this unit (the routines then do nothing).}
    SetMemoryUsageLimit: TDll_SetSize;
    GetMemoryUsageLimit: TDll_GetSize;
    EnterDebugMode, ExitDebugMode, DebugModeActive, ScanDebugBlocks: TDll_IntFunction;
    SetScanBeforeEveryOperation: TDll_SetInt;
    SetStackTraceEntryCount: TDll_SetSize;
    GetStackTraceEntryCount: TDll_GetSize;
    BeginEraseFreed, EndEraseFreed, BeginEraseAllocated, EndEraseAllocated: TDll_Procedure;
    EraseFreedActive, EraseAllocatedActive: TDll_IntFunction;
    SetEventLogFilename: TDll_SetText;
    ReportLeaks: TDll_ReportLeaks;
    GetDebugEventCount: TDll_EventCount;
    GetSmallClassUsage: TDll_SmallClassUsage;
    WalkBlocks: TDll_WalkBlocks;
    SetMinimumAlignment: TDll_SizeFunction;
    GetMinimumAlignment: TDll_GetSize;
    SetOptimizationStrategy: TDll_SetInt;
    WriteUsageReport: TDll_WriteReport;
    {FastMM5's debug entry points, options, variables and events (nil with an older DLL).}
    DebugGetMem, DebugAllocMem: TDll_DebugGetMem;
    DebugFreeMem: TDll_DebugFreeMem;
    DebugReallocMem: TDll_DebugReallocMem;
    SetDebugModeOptions: TDll_SetCardinal;
    BindVariables, SetEventHandler, SetFreedObjectHandler: TDll_SetPointer;
    SetLeakReportAtExit: TDll_SetInt;
    ProcessAllPendingFrees: TDll_Procedure;
    {The records bound to the previous manager: nil in a DLL older than this unit, which then
    installs its own adapters.}
    GetManagerWithPrevious: TDll_GetMemoryManagerWithPrevious;
    GetFpcManager: TDll_GetFpcMemoryManager;
  end;
  DllLoadError: Cardinal;

  UnitInitialized: Boolean;
  InstallationState: TFastMM_MemoryManagerInstallationState = mmisDefaultMemoryManagerInUse;
  {The first module of the process to install fastmm-c owns the leak report: the others share
  its heap, and blocks they see at their own exit may belong to modules still running.}
  IsOwner: Boolean;
  OwnerMapping: NativeUInt;

  EventLogFilename: array[0..CMaxPath] of WideChar;
  LeakLock: TFMMC_CriticalSection;

{------------------------Text without the heap------------------------}

const
  CTextCapacity = 8192;

type
  {UTF-8 text built on the stack: reports are written while the heap is being checked or
  after units are finalized, so they allocate nothing.}
  TFMMC_Text = record
    Len: Integer;
    Data: array[0..CTextCapacity - 1] of AnsiChar;
  end;

procedure TextClear(var T: TFMMC_Text);
begin
  T.Len := 0;
end;

procedure TextAdd(var T: TFMMC_Text; const S: ShortString);
var
  I: Integer;
begin
  for I := 1 to Length(S) do
  begin
    if T.Len >= CTextCapacity then
      Exit;
    T.Data[T.Len] := S[I];
    Inc(T.Len);
  end;
end;

procedure TextAddLine(var T: TFMMC_Text; const S: ShortString);
begin
  TextAdd(T, S);
  TextAdd(T, #13#10);
end;

function UIntToStr(V: NativeUInt): ShortString;
var
  Digits: array[0..31] of AnsiChar;
  N, I: Integer;
begin
  N := 0;
  repeat
    Digits[N] := AnsiChar(Ord('0') + V mod 10);
    V := V div 10;
    Inc(N);
  until V = 0;
  Result := '';
  for I := N - 1 downto 0 do
    Result := Result + Digits[I];
end;

function TwoDigits(V: Word): ShortString;
begin
  Result := UIntToStr(V);
  if Length(Result) < 2 then
    Result := '0' + Result;
end;

procedure TextAddUInt(var T: TFMMC_Text; V: NativeUInt);
begin
  TextAdd(T, UIntToStr(V));
end;

procedure TextAddWideCount(var T: TFMMC_Text; P: PWideChar; ACount: Integer); forward;

procedure TextAddWide(var T: TFMMC_Text; P: PWideChar);
begin
  TextAddWideCount(T, P, -1);
end;

{Up to ACount wide characters (stopping at #0 when ACount is -1) as UTF-8.}
procedure TextAddWideCount(var T: TFMMC_Text; P: PWideChar; ACount: Integer);
var
  N: Integer;
begin
  if (P = nil) or (ACount = 0) or (T.Len >= CTextCapacity) then
    Exit;
  N := FMMC_WideCharToMultiByte(CCodePageUTF8, 0, P, ACount, @T.Data[T.Len], CTextCapacity - T.Len, nil, nil);
  if N <= 0 then
    Exit;
  if ACount < 0 then
    Dec(N); {without the terminating #0}
  Inc(T.Len, N);
end;

const
  {FastMM5's token numbers (FastMM_LogFileEntryHeader and the other templates).}
  CTokenCurrentDate = 1;
  CTokenCurrentTime = 2;
  CTokenLeakSummaryEntries = 14;
  CTokenEventLogFilename = 16;
  CTokenAllocatedKB = 18;
  CTokenOverheadKB = 19;
  CTokenEfficiencyPercentage = 20;
  CTokenBlockSize = 3;
  CTokenObjectClass = 8;
  CTokenMemoryDumpSize = 10;
  CTokenBlockAddress = 11;
  CTokenHexDump = 12;
  CTokenASCIIDump = 13;
  CTokenClassTotalBytes = 21;
  CTokenClassInstanceCount = 22;
  CTokenClassAverageBytes = 23;
  CMaxTokenID = 30;

type
  {The values of a template's tokens, UTF-8 text in Buffer; a token never set is empty.}
  TFMMC_Tokens = record
    Buffer: TFMMC_Text;
    Start, Len: array[0..CMaxTokenID] of Integer;
  end;

procedure TokensClear(var ATokens: TFMMC_Tokens);
begin
  TextClear(ATokens.Buffer);
  FillChar(ATokens.Len, SizeOf(ATokens.Len), 0);
end;

procedure TokenSet(var ATokens: TFMMC_Tokens; AID: Integer; const AText: TFMMC_Text);
var
  N: Integer;
begin
  N := AText.Len;
  if N > CTextCapacity - ATokens.Buffer.Len then
    N := CTextCapacity - ATokens.Buffer.Len;
  ATokens.Start[AID] := ATokens.Buffer.Len;
  ATokens.Len[AID] := N;
  if N > 0 then
  begin
    Move(AText.Data[0], ATokens.Buffer.Data[ATokens.Buffer.Len], N);
    Inc(ATokens.Buffer.Len, N);
  end;
end;

procedure TokenSetShort(var ATokens: TFMMC_Tokens; AID: Integer; const S: ShortString);
var
  T: TFMMC_Text;
begin
  TextClear(T);
  TextAdd(T, S);
  TokenSet(ATokens, AID, T);
end;

procedure TokenSetWide(var ATokens: TFMMC_Tokens; AID: Integer; P: PWideChar);
var
  T: TFMMC_Text;
begin
  TextClear(T);
  TextAddWideCount(T, P, -1);
  TokenSet(ATokens, AID, T);
end;

{FastMM5's general tokens: the date, the time and the event log's path.}
procedure TokensSetGeneral(var ATokens: TFMMC_Tokens);
var
  Time: TFMMC_SystemTime;
begin
  FMMC_GetLocalTime(Time);
  TokenSetShort(ATokens, CTokenCurrentDate, UIntToStr(Time.Year) + '-' + TwoDigits(Time.Month) + '-' +
    TwoDigits(Time.Day));
  TokenSetShort(ATokens, CTokenCurrentTime, TwoDigits(Time.Hour) + ':' + TwoDigits(Time.Minute) + ':' +
    TwoDigits(Time.Second));
  TokenSetWide(ATokens, CTokenEventLogFilename, @EventLogFilename[0]);
end;

{Appends ATemplate with each token number in braces replaced by the token's value (FastMM5's
rule: an unknown or unset token is empty).}
procedure TextAddTemplate(var T: TFMMC_Text; ATemplate: PWideChar; const ATokens: TFMMC_Tokens);
var
  Run: PWideChar;
  ID, N: Integer;
begin
  if ATemplate = nil then
    Exit;
  while ATemplate^ <> #0 do
  begin
    Run := ATemplate;
    while (ATemplate^ <> #0) and (ATemplate^ <> '{') do
      Inc(ATemplate);
    TextAddWideCount(T, Run, (NativeUInt(ATemplate) - NativeUInt(Run)) div SizeOf(WideChar));
    if ATemplate^ = #0 then
      Break;
    Inc(ATemplate);
    ID := 0;
    while (ATemplate^ <> #0) and (ATemplate^ <> '}') do
    begin
      ID := ID * 10 + Ord(ATemplate^) - Ord('0');
      Inc(ATemplate);
    end;
    if ATemplate^ = '}' then
      Inc(ATemplate);
    if (ID >= 0) and (ID <= CMaxTokenID) then
    begin
      N := ATokens.Len[ID];
      if N > CTextCapacity - T.Len then
        N := CTextCapacity - T.Len;
      if N > 0 then
      begin
        Move(ATokens.Buffer.Data[ATokens.Start[ID]], T.Data[T.Len], N);
        Inc(T.Len, N);
      end;
    end;
  end;
end;

{Percentage with one decimal, from integers.}
function PercentText(APart, AWhole: NativeUInt): ShortString;
var
  Tenths: NativeUInt;
begin
  if AWhole = 0 then
    Exit('0.0');
  Tenths := NativeUInt(Round(APart / AWhole * 1000));
  Result := UIntToStr(Tenths div 10) + '.' + UIntToStr(Tenths mod 10);
end;

procedure WideAppendAscii(var ABuffer: array of WideChar; var ALen: Integer; const S: ShortString);
var
  I: Integer;
begin
  for I := 1 to Length(S) do
    if ALen < High(ABuffer) then
    begin
      ABuffer[ALen] := WideChar(Ord(S[I]));
      Inc(ALen);
    end;
  ABuffer[ALen] := #0;
end;

procedure WideAppend(var ABuffer: array of WideChar; var ALen: Integer; P: PWideChar);
begin
  if P <> nil then
    while (P^ <> #0) and (ALen < High(ABuffer)) do
    begin
      ABuffer[ALen] := P^;
      Inc(ALen);
      Inc(P);
    end;
  ABuffer[ALen] := #0;
end;

{The module's file name up to and including its last path separator.}
function ModuleFolder(AModule: NativeUInt; var ABuffer: array of WideChar): Integer;
var
  N: Integer;
begin
  N := FMMC_GetModuleFileNameW(AModule, @ABuffer[0], High(ABuffer));
  if (N <= 0) or (N >= High(ABuffer)) then
    N := 0;
  while (N > 0) and (ABuffer[N - 1] <> '\') and (ABuffer[N - 1] <> '/') do
    Dec(N);
  ABuffer[N] := #0;
  Result := N;
end;

{The application's file name without its extension.}
function ApplicationBaseName(var ABuffer: array of WideChar): Integer;
var
  N, I: Integer;
begin
  N := FMMC_GetModuleFileNameW(0, @ABuffer[0], High(ABuffer));
  if (N <= 0) or (N >= High(ABuffer)) then
    N := 0;
  I := N;
  while (I > 0) and (ABuffer[I - 1] <> '.') and (ABuffer[I - 1] <> '\') and (ABuffer[I - 1] <> '/') do
    Dec(I);
  if (I > 0) and (ABuffer[I - 1] = '.') then
    N := I - 1;
  ABuffer[N] := #0;
  Result := N;
end;

function WriteTextFile(AFileName: PWideChar; const T: TFMMC_Text; ATruncate: Boolean): Boolean;
const
  CBomUTF8: array[0..2] of Byte = ($EF, $BB, $BF);
  CBomUTF16: array[0..1] of Byte = ($FF, $FE);
var
  H: NativeUInt;
  Written: Cardinal;
  Disposition: Cardinal;
  AtStart: Boolean;
  Wide: array[0..CTextCapacity - 1] of WideChar;
  N: Integer;
begin
  Result := False;
  if (AFileName = nil) or (AFileName^ = #0) then
    Exit;
  if ATruncate then
    Disposition := CCreateAlways
  else
    Disposition := COpenAlways;
  H := FMMC_CreateFileW(AFileName, CGenericWrite, CFileShareRead, nil, Disposition, CFileAttributeNormal, 0);
  if H = CInvalidHandle then
    Exit;
  AtStart := FMMC_SetFilePointer(H, 0, nil, CFileEnd) = 0;
  Written := 0;
  case FastMM_TextFileEncoding of
    teUTF8, teUTF8_BOM:
      begin
        if AtStart and (FastMM_TextFileEncoding = teUTF8_BOM) then
          FMMC_WriteFile(H, CBomUTF8, SizeOf(CBomUTF8), Written, nil);
        Result := FMMC_WriteFile(H, T.Data[0], T.Len, Written, nil);
      end;
  else
    begin
      if AtStart and (FastMM_TextFileEncoding = teUTF16LE_BOM) then
        FMMC_WriteFile(H, CBomUTF16, SizeOf(CBomUTF16), Written, nil);
      N := 0;
      if T.Len > 0 then
        N := FMMC_MultiByteToWideChar(CCodePageUTF8, 0, @T.Data[0], T.Len, @Wide[0], CTextCapacity);
      Result := FMMC_WriteFile(H, Wide[0], N * SizeOf(WideChar), Written, nil);
    end;
  end;
  FMMC_CloseHandle(H);
end;

procedure WriteStdErr(const T: TFMMC_Text);
var
  H: NativeUInt;
  Written: Cardinal;
begin
  H := FMMC_GetStdHandle(CStdErrorHandle);
  if (H <> 0) and (H <> CInvalidHandle) and (T.Len > 0) then
    FMMC_WriteFile(H, T.Data[0], T.Len, Written, nil);
end;

procedure ShowMessage(ACaption: PWideChar; const T: TFMMC_Text);
var
  Text: array[0..CTextCapacity - 1] of WideChar;
  N: Integer;
  Line: TFMMC_Text;
begin
  if IsConsole then
  begin
    {A console program (and every test under Wine) gets the text on standard error.}
    TextClear(Line);
    TextAddWide(Line, ACaption);
    TextAdd(Line, ': ');
    WriteStdErr(Line);
    WriteStdErr(T);
    TextClear(Line);
    TextAdd(Line, #13#10);
    WriteStdErr(Line);
    Exit;
  end;
  N := FMMC_MultiByteToWideChar(CCodePageUTF8, 0, @T.Data[0], T.Len, @Text[0], CTextCapacity - 1);
  if N < 0 then
    N := 0;
  Text[N] := #0;
  FMMC_MessageBoxW(0, @Text[0], ACaption, CMBOk_IconError_TaskModal);
end;

procedure OutputDebugText(const T: TFMMC_Text);
var
  Text: array[0..CTextCapacity - 1] of WideChar;
  N: Integer;
begin
  N := FMMC_MultiByteToWideChar(CCodePageUTF8, 0, @T.Data[0], T.Len, @Text[0], CTextCapacity - 1);
  if N < 0 then
    N := 0;
  Text[N] := #0;
  FMMC_OutputDebugStringW(@Text[0]);
end;

{Sends an event where FastMM_*Events say it goes.}
procedure LogEvent(AEvent: TFastMM_MemoryManagerEventType; ACaption: PWideChar; const T: TFMMC_Text);
var
  Entry: TFMMC_Text;
  Tokens: TFMMC_Tokens;
  N: Integer;
begin
  if AEvent in FastMM_LogToFileEvents then
  begin
    TextClear(Entry);
    TokensClear(Tokens);
    TokensSetGeneral(Tokens);
    TextAddTemplate(Entry, FastMM_LogFileEntryHeader, Tokens);
    N := T.Len;
    if N > CTextCapacity - 2 - Entry.Len then
      N := CTextCapacity - 2 - Entry.Len;
    if N > 0 then
    begin
      Move(T.Data[0], Entry.Data[Entry.Len], N);
      Inc(Entry.Len, N);
    end;
    TextAdd(Entry, #13#10);
    WriteTextFile(@EventLogFilename[0], Entry, False);
  end;
  if AEvent in FastMM_OutputDebugStringEvents then
    OutputDebugText(T);
  if AEvent in FastMM_MessageBoxEvents then
    ShowMessage(ACaption, T);
end;

{------------------------Loading the DLL------------------------}

function LoadDll: Boolean;
var
  Path: array[0..CMaxPath] of WideChar;
  N: Integer;
  H: NativeUInt;
  GetManager: TDll_GetMemoryManager;

  function Find(const AName: ShortString): Pointer;
  var
    Z: array[0..63] of AnsiChar;
    I: Integer;
  begin
    for I := 1 to Length(AName) do
      Z[I - 1] := AName[I];
    Z[Length(AName)] := #0;
    Result := FMMC_GetProcAddress(H, @Z[0]);
    if Result = nil then
      DllLoadError := 127; {ERROR_PROC_NOT_FOUND}
  end;

begin
  Result := Dll.Handle <> 0;
  if Result then
    Exit;
  {Beside this module first (a library may live elsewhere than the exe), then the search path.}
  N := ModuleFolder(HInstance, Path);
  WideAppendAscii(Path, N, CFastMMC_DLLName);
  H := FMMC_LoadLibraryW(@Path[0]);
  if H = 0 then
  begin
    N := 0;
    WideAppendAscii(Path, N, CFastMMC_DLLName);
    H := FMMC_LoadLibraryW(@Path[0]);
  end;
  if H = 0 then
  begin
    DllLoadError := FMMC_GetLastError;
    Exit;
  end;
  DllLoadError := 0;
  GetManager := TDll_GetMemoryManager(Find('fastmm_get_memory_manager'));
  Dll.UsableSize := TDll_UsableSize(Find('fastmm_usable_size'));
  Dll.OwnsBlock := TDll_OwnsBlock(Find('fastmm_owns_block'));
  Dll.GetState := TDll_GetState(Find('fastmm_get_state'));
  Dll.CheckHeap := TDll_CheckHeap(Find('fastmm_check_heap'));
  Dll.FlushThreadCache := TDll_Procedure(Find('fastmm_flush_thread_cache'));
  Dll.ReleaseFreeMemory := TDll_Procedure(Find('fastmm_release_free_memory'));
  Dll.SmallClassSlotSize := TDll_SmallClassSlotSize(Find('fastmm_small_class_slot_size'));
  if DllLoadError <> 0 then
    Exit; {an older DLL: not used (and not unloaded: nothing of it ran)}
  Dll.HeapContains := TDll_OwnsBlock(FMMC_GetProcAddress(H, 'fastmm_heap_contains'));
  Dll.SetMemoryUsageLimit := TDll_SetSize(FMMC_GetProcAddress(H, 'fastmm_set_memory_usage_limit'));
  Dll.GetMemoryUsageLimit := TDll_GetSize(FMMC_GetProcAddress(H, 'fastmm_get_memory_usage_limit'));
  Dll.EnterDebugMode := TDll_IntFunction(FMMC_GetProcAddress(H, 'fastmm_enter_debug_mode'));
  Dll.ExitDebugMode := TDll_IntFunction(FMMC_GetProcAddress(H, 'fastmm_exit_debug_mode'));
  Dll.DebugModeActive := TDll_IntFunction(FMMC_GetProcAddress(H, 'fastmm_debug_mode_active'));
  Dll.ScanDebugBlocks := TDll_IntFunction(FMMC_GetProcAddress(H, 'fastmm_scan_debug_blocks_for_corruption'));
  Dll.SetScanBeforeEveryOperation := TDll_SetInt(FMMC_GetProcAddress(H, 'fastmm_set_scan_before_every_operation'));
  Dll.SetStackTraceEntryCount := TDll_SetSize(FMMC_GetProcAddress(H, 'fastmm_set_debug_mode_stack_trace_entry_count'));
  Dll.GetStackTraceEntryCount := TDll_GetSize(FMMC_GetProcAddress(H, 'fastmm_get_debug_mode_stack_trace_entry_count'));
  Dll.BeginEraseFreed := TDll_Procedure(FMMC_GetProcAddress(H, 'fastmm_begin_erase_freed_block_content'));
  Dll.EndEraseFreed := TDll_Procedure(FMMC_GetProcAddress(H, 'fastmm_end_erase_freed_block_content'));
  Dll.EraseFreedActive := TDll_IntFunction(FMMC_GetProcAddress(H, 'fastmm_erase_freed_block_content_active'));
  Dll.BeginEraseAllocated := TDll_Procedure(FMMC_GetProcAddress(H, 'fastmm_begin_erase_allocated_block_content'));
  Dll.EndEraseAllocated := TDll_Procedure(FMMC_GetProcAddress(H, 'fastmm_end_erase_allocated_block_content'));
  Dll.EraseAllocatedActive := TDll_IntFunction(FMMC_GetProcAddress(H, 'fastmm_erase_allocated_block_content_active'));
  Dll.SetEventLogFilename := TDll_SetText(FMMC_GetProcAddress(H, 'fastmm_set_event_log_filename'));
  Dll.ReportLeaks := TDll_ReportLeaks(FMMC_GetProcAddress(H, 'fastmm_report_leaks'));
  Dll.GetDebugEventCount := TDll_EventCount(FMMC_GetProcAddress(H, 'fastmm_get_debug_event_count'));
  Dll.GetSmallClassUsage := TDll_SmallClassUsage(FMMC_GetProcAddress(H, 'fastmm_get_small_class_usage'));
  Dll.WalkBlocks := TDll_WalkBlocks(FMMC_GetProcAddress(H, 'fastmm_walk_blocks'));
  Dll.SetMinimumAlignment := TDll_SizeFunction(FMMC_GetProcAddress(H, 'fastmm_set_minimum_alignment'));
  Dll.GetMinimumAlignment := TDll_GetSize(FMMC_GetProcAddress(H, 'fastmm_get_minimum_alignment'));
  Dll.SetOptimizationStrategy := TDll_SetInt(FMMC_GetProcAddress(H, 'fastmm_set_optimization_strategy'));
  Dll.WriteUsageReport := TDll_WriteReport(FMMC_GetProcAddress(H, 'fastmm_write_usage_report'));
  Dll.DebugGetMem := TDll_DebugGetMem(FMMC_GetProcAddress(H, 'fastmm_debug_getmem'));
  Dll.DebugAllocMem := TDll_DebugGetMem(FMMC_GetProcAddress(H, 'fastmm_debug_allocmem'));
  Dll.DebugFreeMem := TDll_DebugFreeMem(FMMC_GetProcAddress(H, 'fastmm_debug_freemem'));
  Dll.DebugReallocMem := TDll_DebugReallocMem(FMMC_GetProcAddress(H, 'fastmm_debug_reallocmem'));
  Dll.SetDebugModeOptions := TDll_SetCardinal(FMMC_GetProcAddress(H, 'fastmm_set_debug_mode_options'));
  Dll.BindVariables := TDll_SetPointer(FMMC_GetProcAddress(H, 'fastmm_bind_variables'));
  Dll.SetEventHandler := TDll_SetPointer(FMMC_GetProcAddress(H, 'fastmm_set_event_handler'));
  Dll.SetFreedObjectHandler := TDll_SetPointer(FMMC_GetProcAddress(H, 'fastmm_set_freed_object_call_handler'));
  Dll.SetLeakReportAtExit := TDll_SetInt(FMMC_GetProcAddress(H, 'fastmm_set_leak_report_at_exit'));
  Dll.ProcessAllPendingFrees := TDll_Procedure(FMMC_GetProcAddress(H, 'fastmm_process_all_pending_frees'));
  Dll.GetManagerWithPrevious := TDll_GetMemoryManagerWithPrevious(FMMC_GetProcAddress(H, 'fastmm_get_memory_manager_with_previous'));
  Dll.GetFpcManager := TDll_GetFpcMemoryManager(FMMC_GetProcAddress(H, 'fastmm_get_fpc_memory_manager'));
  GetManager(Dll.MM);
  if not (Assigned(Dll.MM.GetMem) and Assigned(Dll.MM.FreeMem) and Assigned(Dll.MM.ReallocMem)
    and Assigned(Dll.MM.AllocMem)) then
  begin
    DllLoadError := 127;
    Exit;
  end;
  {Never unloaded: its blocks must stay valid to the very end of the process.}
  Dll.Handle := H;
  Result := True;
end;

{------------------------Expected leaks------------------------}

const
  CMaxLeakPointers = 4096;
  CMaxLeakEntries = 256;

type
  TLeakEntry = record
    LeakedClass: TClass;
    LeakSize: NativeInt;
    Count: Integer;
  end;

var
  LeakPointers: array[0..CMaxLeakPointers - 1] of Pointer;
  {How many times each pointer is registered (FastMM5 counts a pointer registered twice).}
  LeakPointerCounts: array[0..CMaxLeakPointers - 1] of Integer;
  LeakPointerCount: Integer;
  LeakEntries: array[0..CMaxLeakEntries - 1] of TLeakEntry;
  LeakEntryCount: Integer;

{As FastMM5: any pointer is accepted (False only when the list is full); the DLL learns the
first registration of one of its blocks, for its debug-mode leak report.}
function RegisterLeakPointer(APointer: Pointer): Boolean;
var
  I: Integer;
begin
  Result := True;
  FMMC_EnterCriticalSection(LeakLock);
  I := 0;
  while (I < LeakPointerCount) and (LeakPointers[I] <> APointer) do
    Inc(I);
  if I < LeakPointerCount then
    Inc(LeakPointerCounts[I])
  else if LeakPointerCount < CMaxLeakPointers then
  begin
    LeakPointers[LeakPointerCount] := APointer;
    LeakPointerCounts[LeakPointerCount] := 1;
    Inc(LeakPointerCount);
    if Dll.Handle <> 0 then
      Dll.MM.RegisterExpectedMemoryLeak(APointer);
  end
  else
    Result := False;
  FMMC_LeaveCriticalSection(LeakLock);
end;

{False when the pointer is not registered; the last unregistration removes it.}
function UnregisterLeakPointer(APointer: Pointer): Boolean;
var
  I: Integer;
begin
  Result := False;
  FMMC_EnterCriticalSection(LeakLock);
  for I := 0 to LeakPointerCount - 1 do
    if LeakPointers[I] = APointer then
    begin
      Dec(LeakPointerCounts[I]);
      if LeakPointerCounts[I] = 0 then
      begin
        Dec(LeakPointerCount);
        LeakPointers[I] := LeakPointers[LeakPointerCount];
        LeakPointerCounts[I] := LeakPointerCounts[LeakPointerCount];
        if Dll.Handle <> 0 then
          Dll.MM.UnregisterExpectedMemoryLeak(APointer);
      end;
      Result := True;
      Break;
    end;
  FMMC_LeaveCriticalSection(LeakLock);
end;

function AdjustLeakEntry(AClass: TClass; ASize: NativeInt; ACount: Integer): Boolean;
var
  I: Integer;
begin
  Result := False;
  if ACount = 0 then
    Exit;
  FMMC_EnterCriticalSection(LeakLock);
  I := 0;
  while (I < LeakEntryCount) and not ((LeakEntries[I].LeakedClass = AClass) and (LeakEntries[I].LeakSize = ASize)) do
    Inc(I);
  if I < LeakEntryCount then
  begin
    if LeakEntries[I].Count + ACount >= 0 then
    begin
      Inc(LeakEntries[I].Count, ACount);
      if LeakEntries[I].Count = 0 then
      begin
        Dec(LeakEntryCount);
        LeakEntries[I] := LeakEntries[LeakEntryCount];
      end;
      Result := True;
    end;
  end
  else if (ACount > 0) and (LeakEntryCount < CMaxLeakEntries) then
  begin
    LeakEntries[LeakEntryCount].LeakedClass := AClass;
    LeakEntries[LeakEntryCount].LeakSize := ASize;
    LeakEntries[LeakEntryCount].Count := ACount;
    Inc(LeakEntryCount);
    Result := True;
  end;
  FMMC_LeaveCriticalSection(LeakLock);
end;

function FastMM_RegisterExpectedMemoryLeak(ALeakedPointer: Pointer): Boolean;
begin
  Result := RegisterLeakPointer(ALeakedPointer);
end;

function FastMM_RegisterExpectedMemoryLeak(ALeakedObjectClass: TClass; ACount: Integer): Boolean;
begin
  Result := (ALeakedObjectClass <> nil) and AdjustLeakEntry(ALeakedObjectClass, 0, ACount);
end;

function FastMM_RegisterExpectedMemoryLeak(ALeakedBlockSize: NativeInt; ACount: Integer): Boolean;
begin
  Result := (ALeakedBlockSize >= 0) and AdjustLeakEntry(nil, ALeakedBlockSize, ACount);
end;

function FastMM_UnregisterExpectedMemoryLeak(ALeakedPointer: Pointer): Boolean;
begin
  Result := UnregisterLeakPointer(ALeakedPointer);
end;

function FastMM_UnregisterExpectedMemoryLeak(ALeakedObjectClass: TClass; ACount: Integer): Boolean;
begin
  Result := (ALeakedObjectClass <> nil) and (ACount > 0) and AdjustLeakEntry(ALeakedObjectClass, 0, -ACount);
end;

function FastMM_UnregisterExpectedMemoryLeak(ALeakedBlockSize: NativeInt; ACount: Integer): Boolean;
begin
  Result := (ACount > 0) and AdjustLeakEntry(nil, ALeakedBlockSize, -ACount);
end;

function FastMM_GetRegisteredMemoryLeaks: TFastMM_RegisteredMemoryLeaks;
var
  Pointers: array[0..CMaxLeakPointers - 1] of Pointer;
  Counts: array[0..CMaxLeakPointers - 1] of Integer;
  Entries: array[0..CMaxLeakEntries - 1] of TLeakEntry;
  NP, NE, I: Integer;
begin
  {Copied under the lock, the array built outside it (building allocates).}
  FMMC_EnterCriticalSection(LeakLock);
  NP := LeakPointerCount;
  NE := LeakEntryCount;
  if NP > 0 then
  begin
    Move(LeakPointers[0], Pointers[0], NP * SizeOf(Pointer));
    Move(LeakPointerCounts[0], Counts[0], NP * SizeOf(Integer));
  end;
  if NE > 0 then
    Move(LeakEntries[0], Entries[0], NE * SizeOf(TLeakEntry));
  FMMC_LeaveCriticalSection(LeakLock);
  Result := nil;
  SetLength(Result, NP + NE);
  for I := 0 to NP - 1 do
  begin
    Result[I].LeakAddress := Pointers[I];
    Result[I].LeakedClass := nil;
    Result[I].LeakSize := 0;
    Result[I].LeakCount := Counts[I];
  end;
  for I := 0 to NE - 1 do
  begin
    Result[NP + I].LeakAddress := nil;
    Result[NP + I].LeakedClass := Entries[I].LeakedClass;
    Result[NP + I].LeakSize := Entries[I].LeakSize;
    Result[NP + I].LeakCount := Entries[I].Count;
  end;
end;

{Expected leaks by class and by size (FastMM5's UpdateExpectedLeakList): a leaked block of a
registered class, or of a registered size, takes one off that registration's count for the
report being written.}
var
  ReportLeakEntries: array[0..CMaxLeakEntries - 1] of TLeakEntry;
  ReportLeakEntryCount: Integer;
  {True once the DLL has written the detail of each leaked debug block (ReportDebugBlockLeakDetails):
  the walk's leak check then counts those blocks in its summary without a second detail.}
  DebugLeakDetailsWritten: Boolean;

procedure PrepareLeakMatching;
begin
  FMMC_EnterCriticalSection(LeakLock);
  ReportLeakEntryCount := LeakEntryCount;
  if LeakEntryCount > 0 then
    Move(LeakEntries[0], ReportLeakEntries[0], LeakEntryCount * SizeOf(TLeakEntry));
  FMMC_LeaveCriticalSection(LeakLock);
end;

{------------------------The memory manager records------------------------}

{What differs between the RTL's two records is kept to the entry points each gets and a few
fields (SetOurEntryPoints, SetPreviousAllocators); installing, checking and uninstalling are
one body for both.

The record installed holds the DLL's own functions: GetMem and AllocMem, and FreeMem and
ReallocMem (and for Free Pascal FreeMemSize and MemSize) from a record the DLL binds to this
module's previous manager (fastmm_get_memory_manager_with_previous,
fastmm_get_fpc_memory_manager). Their slow paths hand the previous manager's blocks back to it
and report a pointer that lies in the DLL's memory but is no live block through DllHeapError.
An older DLL without those exports, or one whose slots are all bound by other modules of the
process (eight), gets the adapters below instead: the same meanings, one Pascal call more.}

var
  PreviousMM: TFastMMC_RTLMemoryManager;
  InstalledMM: TFastMMC_RTLMemoryManager;
  {False once uninstalled: new blocks then come from the previous manager. The DLL reads it
  (AllocateFromLibrary) for Free Pascal's ReAllocMem(nil, n).}
  AllocateFromDll: Boolean;
  {True when the record holds the DLL's bound entry points, False with the adapters.}
  DllEntryPointsBound: Boolean;

{The code address a procedure variable holds, the same way in Delphi and in Free Pascal's mode
delphi and mode objfpc (in objfpc @ gives the variable's own address): an untyped parameter
receives the variable itself.}
function CodeOf(const AProcVar): Pointer;
begin
  Result := PPointer(@AProcVar)^;
end;

{The RTL's heap errors, raised as the RTL raises them: 203 (out of memory) or 204 (invalid
pointer). Free Pascal: through ErrorProc (SysUtils turns it into EOutOfMemory /
EInvalidPointer), else a run-time error, as its own heap does. Delphi: System.Error, which
SysUtils turns into the same exceptions.}
procedure HeapError(ACode: Longint);
begin
{$ifdef FPC}
  if Assigned(ErrorProc) then
    ErrorProc(ACode, get_caller_addr(get_frame), get_caller_frame(get_frame));
  RunError(ACode);
{$else}
  if ACode = 203 then
    System.Error(reOutOfMemory)
  else
    System.Error(reInvalidPtr);
{$endif}
end;

{The same, called by the DLL's slow paths with the address the program called from. The
exception unwinds through the DLL's frames, which hold no lock then (Win64: SEH, with the DLL's
unwind data; Win32: the compiler's own unwinding, which skips them).}
procedure DllHeapError(ACode: Longint; AAddress: Pointer); cdecl;
begin
{$ifdef FPC}
  if Assigned(ErrorProc) then
    ErrorProc(ACode, AAddress, get_frame);
  RunError(ACode);
{$else}
  HeapError(ACode);
{$endif}
end;

{A pointer the DLL refuses but that lies in memory it maps for blocks is not a live block (freed
twice, or inside a block): an error, never the previous manager's business. Only a pointer in
no memory of the DLL's is the previous manager's block.}
function InDllMemory(APointer: Pointer): Boolean;
begin
  Result := Assigned(Dll.HeapContains) and (Dll.HeapContains(APointer) <> 0);
end;

{$ifdef FMMC_FPC_RECORD}

{ Free Pascal's TMemoryManager }

var
  FpcBindings: TDllFpcBindings;
  FpcEntries: TDllFpcMemoryManager;

{The DLL's entry points, bound to PreviousMM; False when the DLL cannot give them.}
function BindFpcEntryPoints: Boolean;
begin
  Result := False;
  if not Assigned(Dll.GetFpcManager) then
    Exit;
  FillChar(FpcBindings, SizeOf(FpcBindings), 0);
  FpcBindings.Size := SizeOf(FpcBindings);
  FpcBindings.PreviousFreeMem := PreviousMM.FreeMem;
  FpcBindings.PreviousReAllocMem := PreviousMM.ReAllocMem;
  FpcBindings.PreviousMemSize := PreviousMM.MemSize;
  FpcBindings.PreviousGetMem := PreviousMM.GetMem;
  FpcBindings.HeapError := @DllHeapError;
  FpcBindings.ReturnNilIfGrowHeapFails := @ReturnNilIfGrowHeapFails;
  FpcBindings.AllocateFromLibrary := @AllocateFromDll;
  Result := Dll.GetFpcManager(FpcEntries, FpcBindings) <> 0;
end;

{The adapters, for a DLL that cannot bind (older, or no slot left).}

function OutOfMemory: Pointer;
begin
  Result := nil;
  if not ReturnNilIfGrowHeapFails then
    HeapError(203);
end;

function FpcGetMem(ASize: PtrUInt): Pointer;
begin
  Result := Dll.MM.GetMem(NativeInt(ASize));
  if Result = nil then
    Result := OutOfMemory;
end;

function FpcFreeMem(APointer: Pointer): PtrUInt;
begin
  {The DLL refuses what it does not own without touching it. Free Pascal ignores the size
  returned; 0 as its cmem unit does.}
  Result := 0;
  if Dll.MM.FreeMem(APointer) <> 0 then
  begin
    if InDllMemory(APointer) then
      HeapError(204)
    else
      Result := PreviousMM.FreeMem(APointer);
  end;
end;

function FpcFreeMemSize(APointer: Pointer; ASize: PtrUInt): PtrUInt;
begin
  Result := FpcFreeMem(APointer);
end;

function FpcAllocMem(ASize: PtrUInt): Pointer;
begin
  Result := Dll.MM.AllocMem(NativeInt(ASize));
  if Result = nil then
    Result := OutOfMemory;
end;

function FpcReAllocMem(var APointer: Pointer; ASize: PtrUInt): Pointer;
var
  R: Pointer;
begin
  if ASize = 0 then
  begin
    if APointer <> nil then
    begin
      FpcFreeMem(APointer);
      APointer := nil;
    end;
    Exit(nil);
  end;
  if APointer = nil then
  begin
    if AllocateFromDll then
      APointer := FpcGetMem(ASize)
    else
      APointer := PreviousMM.GetMem(ASize);
    Exit(APointer);
  end;
  if not InDllMemory(APointer) then
    {The previous manager's block: it resizes it (and updates APointer).}
    Exit(PreviousMM.ReAllocMem(APointer, ASize));
  R := Dll.MM.ReallocMem(APointer, NativeInt(ASize));
  if R = nil then
  begin
    if Dll.OwnsBlock(APointer) <> 0 then
      {Out of memory: the block is left as it was.}
      Exit(OutOfMemory);
    HeapError(204);
    Exit(nil);
  end;
  APointer := R;
  Result := R;
end;

function FpcMemSize(APointer: Pointer): PtrUInt;
begin
  if APointer = nil then
    Exit(0);
  if not InDllMemory(APointer) then
    Exit(PreviousMM.MemSize(APointer));
  Result := Dll.UsableSize(APointer);
end;

function FpcGetHeapStatus: THeapStatus;
begin
  Result := FastMM_GetHeapStatus;
end;

var
  FpcMaxHeapUsed: PtrUInt;

function FpcGetFPCHeapStatus: TFPCHeapStatus;
var
  S: TFastMMC_State;
  Used: PtrUInt;
begin
  FillChar(S, SizeOf(S), 0);
  FastMMC_GetState(S);
  Used := S.Small.BytesInUse + S.Medium.BytesInUse + S.Large.BytesInUse;
  {The DLL keeps no peak of the bytes in use: the highest value seen here stands in.}
  if Used > FpcMaxHeapUsed then
    FpcMaxHeapUsed := Used;
  Result.MaxHeapSize := S.OSBytesPeak;
  Result.MaxHeapUsed := FpcMaxHeapUsed;
  Result.CurrHeapSize := S.OSBytesReserved;
  Result.CurrHeapUsed := Used;
  if S.OSBytesReserved > Used then
    Result.CurrHeapFree := S.OSBytesReserved - Used
  else
    Result.CurrHeapFree := 0;
end;

procedure SetOurEntryPoints(var AManager: TFastMMC_RTLMemoryManager);
begin
  {NeedLock, InitThread, DoneThread, RelocateHeap stay as they were.}
  DllEntryPointsBound := BindFpcEntryPoints;
  if DllEntryPointsBound then
  begin
    AManager.GetMem := FpcEntries.GetMem;
    AManager.FreeMem := FpcEntries.FreeMem;
    AManager.FreeMemSize := FpcEntries.FreeMemSize;
    AManager.AllocMem := FpcEntries.AllocMem;
    AManager.ReAllocMem := FpcEntries.ReAllocMem;
    AManager.MemSize := FpcEntries.MemSize;
  end
  else
  begin
    AManager.GetMem := @FpcGetMem;
    AManager.FreeMem := @FpcFreeMem;
    AManager.FreeMemSize := @FpcFreeMemSize;
    AManager.AllocMem := @FpcAllocMem;
    AManager.ReAllocMem := @FpcReAllocMem;
    AManager.MemSize := @FpcMemSize;
  end;
  AManager.GetHeapStatus := @FpcGetHeapStatus;
  AManager.GetFPCHeapStatus := @FpcGetFPCHeapStatus;
end;

{$else}

{ Delphi's TMemoryManagerEx: System raises EOutOfMemory when GetMem, AllocMem or ReallocMem
  return nil, EInvalidPointer when FreeMem returns non-zero. }

var
  DelphiBindings: TDllDelphiBindings;

{The DLL's record with FreeMem and ReallocMem bound to PreviousMM; False when the DLL cannot
give it.}
function BindDelphiEntryPoints(var AEntries: TDllMemoryManager): Boolean;
begin
  Result := False;
  if not Assigned(Dll.GetManagerWithPrevious) then
    Exit;
  FillChar(DelphiBindings, SizeOf(DelphiBindings), 0);
  DelphiBindings.Size := SizeOf(DelphiBindings);
  DelphiBindings.PreviousFreeMem := PreviousMM.FreeMem;
  DelphiBindings.PreviousReallocMem := PreviousMM.ReallocMem;
  DelphiBindings.HeapError := @DllHeapError;
  Result := Dll.GetManagerWithPrevious(AEntries, DelphiBindings) <> 0;
end;

{The adapters, for a DLL that cannot bind (older, or no slot left).}

function DelphiFreeMem(APointer: Pointer): Integer;
begin
  Result := Dll.MM.FreeMem(APointer);
  if (Result <> 0) and not InDllMemory(APointer) then
    Result := PreviousMM.FreeMem(APointer);
end;

function DelphiReallocMem(APointer: Pointer; ASize: NativeInt): Pointer;
begin
  Result := Dll.MM.ReallocMem(APointer, ASize);
  if (Result = nil) and (Dll.OwnsBlock(APointer) = 0) then
  begin
    {Delphi's System would report a nil result as out of memory: a pointer that is not a live
    block is an invalid pointer (as FastMM5 reports a damaged debug block).}
    if InDllMemory(APointer) then
      HeapError(204)
    else
      Result := PreviousMM.ReallocMem(APointer, ASize);
  end;
end;

function DelphiRegisterExpectedMemoryLeak(APointer: Pointer): Boolean;
begin
  Result := RegisterLeakPointer(APointer);
end;

function DelphiUnregisterExpectedMemoryLeak(APointer: Pointer): Boolean;
begin
  Result := UnregisterLeakPointer(APointer);
end;

procedure SetOurEntryPoints(var AManager: TFastMMC_RTLMemoryManager);
var
  Bound: TDllMemoryManager;
begin
  {GetMem and AllocMem are the DLL's own entry points (register convention on Win32).}
  AManager.GetMem := Dll.MM.GetMem;
  AManager.AllocMem := Dll.MM.AllocMem;
  DllEntryPointsBound := BindDelphiEntryPoints(Bound);
  if DllEntryPointsBound then
  begin
    AManager.FreeMem := Bound.FreeMem;
    AManager.ReallocMem := Bound.ReallocMem;
  end
  else
  begin
    AManager.FreeMem := @DelphiFreeMem;
    AManager.ReallocMem := @DelphiReallocMem;
  end;
  {The unit keeps the lists of expected leaks (FastMM5 counts a pointer registered twice).}
  AManager.RegisterExpectedMemoryLeak := @DelphiRegisterExpectedMemoryLeak;
  AManager.UnregisterExpectedMemoryLeak := @DelphiUnregisterExpectedMemoryLeak;
end;

{$endif}

{New blocks from the previous manager again; everything else stays ours.}
procedure SetPreviousAllocators(var AManager: TFastMMC_RTLMemoryManager);
begin
  AManager.GetMem := PreviousMM.GetMem;
  AManager.AllocMem := PreviousMM.AllocMem;
{$ifdef FMMC_FPC_RECORD}
  {Its statistics describe what it allocates.}
  AManager.GetHeapStatus := PreviousMM.GetHeapStatus;
  AManager.GetFPCHeapStatus := PreviousMM.GetFPCHeapStatus;
{$endif}
end;

procedure InstallRecord;
begin
  GetMemoryManager(PreviousMM);
  InstalledMM := PreviousMM;
  SetOurEntryPoints(InstalledMM);
  AllocateFromDll := True;
  SetMemoryManager(InstalledMM);
end;

{False when another memory manager was installed after ours.}
function RecordStillOurs: Boolean;
var
  Current: TFastMMC_RTLMemoryManager;
begin
  GetMemoryManager(Current);
  Result := (CodeOf(Current.GetMem) = CodeOf(InstalledMM.GetMem)) and
    (CodeOf(Current.FreeMem) = CodeOf(InstalledMM.FreeMem));
end;

{Uninstalling: new blocks come from the previous manager again; the DLL's blocks that are
still alive (the RTL frees some after the last finalization) keep being freed and resized by
the DLL, which is never unloaded.}
procedure UninstallRecord;
var
  Drained: TFastMMC_RTLMemoryManager;
begin
  AllocateFromDll := False;
  Drained := InstalledMM;
  SetPreviousAllocators(Drained);
  SetMemoryManager(Drained);
end;

procedure FastMMC_GetPreviousMemoryManager(var AMemoryManager: TFastMMC_RTLMemoryManager);
begin
  if InstallationState in [mmisInstalled, mmisUsingSharedMemoryManager] then
    AMemoryManager := PreviousMM
  else
    GetMemoryManager(AMemoryManager);
end;

{------------------------Core interface------------------------}

function FastMM_GetMem(ASize: NativeInt): Pointer;
begin
  if Dll.Handle = 0 then
    Exit(nil);
  Result := Dll.MM.GetMem(ASize);
end;

function FastMM_FreeMem(APointer: Pointer): Integer;
begin
  if Dll.Handle = 0 then
    Exit(1);
  Result := Dll.MM.FreeMem(APointer);
end;

function FastMM_ReallocMem(APointer: Pointer; ANewSize: NativeInt): Pointer;
begin
  if Dll.Handle = 0 then
    Exit(nil);
  Result := Dll.MM.ReallocMem(APointer, ANewSize);
end;

function FastMM_AllocMem(ASize: NativeInt): Pointer;
begin
  if Dll.Handle = 0 then
    Exit(nil);
  Result := Dll.MM.AllocMem(ASize);
end;

{------------------------Diagnostics------------------------}

function FastMMC_GetState(var AState: TFastMMC_State): Boolean;
begin
  Result := Dll.Handle <> 0;
  if Result then
    Dll.GetState(AState)
  else
    FillChar(AState, SizeOf(AState), 0);
end;

function FastMMC_Installed: Boolean;
begin
  Result := InstallationState in [mmisInstalled, mmisUsingSharedMemoryManager];
end;

function FastMMC_DLLHandle: NativeUInt;
begin
  Result := Dll.Handle;
end;

function FastMMC_OwnsBlock(APointer: Pointer): Boolean;
begin
  Result := (Dll.Handle <> 0) and (Dll.OwnsBlock(APointer) <> 0);
end;

function FastMMC_CheckHeap: Integer;
begin
  if Dll.Handle = 0 then
    Exit(-1);
  Result := Dll.CheckHeap();
end;

procedure FastMMC_FlushThreadCache;
begin
  if Dll.Handle <> 0 then
    Dll.FlushThreadCache();
end;

procedure FastMMC_ReleaseFreeMemory;
begin
  if Dll.Handle <> 0 then
    Dll.ReleaseFreeMemory();
end;

function FastMM_BlockCurrentUserBytes(APointer: Pointer): NativeInt;
begin
  if Dll.Handle = 0 then
    Exit(0);
  Result := NativeInt(Dll.UsableSize(APointer));
end;

function FastMM_BlockMaximumUserBytes(APointer: Pointer): NativeInt;
begin
  Result := FastMM_BlockCurrentUserBytes(APointer);
end;

function FastMM_ProcessAllPendingFrees: Boolean;
begin
  if (Dll.Handle <> 0) and Assigned(Dll.ProcessAllPendingFrees) then
    Dll.ProcessAllPendingFrees()
  else
    FastMMC_FlushThreadCache;
  Result := True;
end;

function FastMM_GetCurrentMemoryUsage: NativeUInt;
var
  S: TFastMMC_State;
begin
  FastMMC_GetState(S);
  Result := S.OSBytesReserved;
end;

function AllocatedBytes(const S: TFastMMC_State): NativeUInt;
begin
  Result := S.Small.BytesInUse + S.Medium.BytesInUse + S.Large.BytesInUse;
end;

function Minus(A, B: NativeUInt): NativeUInt;
begin
  if A > B then
    Result := A - B
  else
    Result := 0;
end;

{Free Pascal's THeapStatus has Cardinal fields.}
function Clamp(V: NativeUInt): NativeUInt;
begin
  Result := V;
{$ifdef FPC}
{$ifdef WIN64}
  if Result > High(Cardinal) then
    Result := High(Cardinal);
{$endif}
{$endif}
end;

function FastMM_GetHeapStatus(ALockTimeoutMilliseconds: Cardinal): THeapStatus;
const
  {include/fastmm.h and ARCHITECTURE.md: a small block's usable size is its slot less a 4-byte
  header; a medium block's is its size less a 16-byte header.}
  CSmallHeader = 4;
  CMediumHeader = 16;
var
  S: TFastMMC_State;
  Allocated, FreeSmall, FreeBig, Unused, Total, TotalFree: NativeUInt;
begin
  FillChar(Result, SizeOf(Result), 0);
  if not FastMMC_GetState(S) then
    Exit;
  Allocated := AllocatedBytes(S);
  Total := S.OSBytesReserved;
  FreeSmall := Minus(S.Small.BytesReserved, S.Small.BytesInUse + S.Small.BlocksInUse * CSmallHeader);
  FreeBig := Minus(S.Medium.BytesReserved, S.Medium.BytesInUse + S.Medium.BlocksInUse * CMediumHeader);
  Unused := Minus(Total, S.Small.BytesReserved + S.Medium.BytesReserved + S.Large.BytesReserved);
  TotalFree := FreeSmall + FreeBig + Unused;
  Result.TotalAddrSpace := Clamp(Total);
  Result.TotalUncommitted := 0;
  Result.TotalCommitted := Clamp(Total);
  Result.TotalAllocated := Clamp(Allocated);
  Result.TotalFree := Clamp(TotalFree);
  Result.FreeSmall := Clamp(FreeSmall);
  Result.FreeBig := Clamp(FreeBig);
  Result.Unused := Clamp(Unused);
  Result.Overhead := Clamp(Minus(Total, Allocated + TotalFree));
  Result.HeapErrorCode := 0;
end;

function FastMM_GetUsageSummary(ALockTimeoutMilliseconds: Cardinal): TFastMM_UsageSummary;
var
  S: TFastMMC_State;
begin
  FastMMC_GetState(S);
  Result.AllocatedBytes := AllocatedBytes(S);
  Result.OverheadBytes := Minus(S.OSBytesReserved, Result.AllocatedBytes);
  if Result.AllocatedBytes + Result.OverheadBytes > 0 then
    Result.EfficiencyPercentage := Result.AllocatedBytes / (Result.AllocatedBytes + Result.OverheadBytes) * 100
  else
    Result.EfficiencyPercentage := 100;
end;

{------------------------Blocks: what they hold------------------------}

{A readable-memory test through VirtualQuery, remembering the last region asked about.}
type
  TFMMC_MemoryBasicInformation = record
    BaseAddress: Pointer;
    AllocationBase: Pointer;
    AllocationProtect: Cardinal;
    RegionSize: NativeUInt;
    State: Cardinal;
    Protect: Cardinal;
    RegionType: Cardinal;
  end;

  TReadableCache = record
    RegionStart, RegionEnd: NativeUInt;
    Readable: Boolean;
  end;

function FMMC_VirtualQuery(AAddress: Pointer; var ABuffer: TFMMC_MemoryBasicInformation; ALength: NativeUInt): NativeUInt;
  stdcall; external 'kernel32.dll' name 'VirtualQuery';

const
  CMemCommit = $1000;
  CMemReserve = $2000;
  CPageGuard = $100;
  CPageNoAccess = 1;

function IsReadable(var ACache: TReadableCache; AAddress: Pointer; ASize: NativeUInt): Boolean;
var
  Info: TFMMC_MemoryBasicInformation;
  A: NativeUInt;
begin
  A := NativeUInt(AAddress);
  while True do
  begin
    if (A < ACache.RegionStart) or (A >= ACache.RegionEnd) then
    begin
      if FMMC_VirtualQuery(Pointer(A), Info, SizeOf(Info)) = 0 then
        Exit(False);
      ACache.RegionStart := NativeUInt(Info.BaseAddress);
      ACache.RegionEnd := ACache.RegionStart + Info.RegionSize;
      ACache.Readable := (Info.State = CMemCommit) and (Info.Protect and (CPageGuard or CPageNoAccess) = 0) and
        (Info.Protect <> 0);
    end;
    if not ACache.Readable then
      Exit(False);
    if (ASize <= 1) or (A + ASize - 1 < ACache.RegionEnd) then
      Exit(True);
    {The range crosses into the next region.}
    Dec(ASize, ACache.RegionEnd - A);
    A := ACache.RegionEnd;
  end;
end;

function FastMM_DetectClassInstance(APointer: Pointer): TClass;
const
  {FastMM5's sanity limits: no class hierarchy is deeper, no VMT is bigger.}
  CMaxDepth = 1000;
  CMaxVMTSize = $1000;
var
  Cache: TReadableCache;
  VMT, Parent: PByte;
  Depth: Integer;
  Name: PShortString;
begin
  Result := nil;
  Cache.RegionStart := 0;
  Cache.RegionEnd := 0;
  if (NativeUInt(APointer) <= 65535) or not IsReadable(Cache, APointer, SizeOf(Pointer)) then
    Exit;
  VMT := PPointer(APointer)^;
  for Depth := 0 to CMaxDepth do
  begin
    if (NativeUInt(VMT) <= 65535) or (NativeUInt(VMT) and (SizeOf(Pointer) - 1) <> 0) then
      Exit;
{$ifdef FPC}
    {Free Pascal's VMT: the instance size and its negation, the parent's VMT reference, the
    class name (objpash.inc, TVmt).}
    if not IsReadable(Cache, VMT, 4 * SizeOf(Pointer)) then
      Exit;
    if (PNativeInt(VMT)^ <= 0) or (PNativeInt(VMT + SizeOf(Pointer))^ <> -PNativeInt(VMT)^) then
      Exit;
    Name := PPointer(VMT + vmtClassName)^;
    Parent := PPointer(VMT + vmtParent)^;
{$else}
    {Delphi's VMT: the self pointer, the parent's VMT reference and the class name before it;
    the name lies just after the VMT.}
    if not (IsReadable(Cache, VMT + vmtSelfPtr, SizeOf(Pointer)) and IsReadable(Cache, VMT + vmtParent, SizeOf(Pointer))
      and IsReadable(Cache, VMT + vmtClassName, SizeOf(Pointer))) then
      Exit;
    if PPointer(VMT + vmtSelfPtr)^ <> VMT then
      Exit;
    Name := PPointer(VMT + vmtClassName)^;
    if NativeUInt(Name) - NativeUInt(VMT) > CMaxVMTSize then
      Exit;
    Parent := PPointer(VMT + vmtParent)^;
{$endif}
    if (NativeUInt(Name) <= 65535) or not IsReadable(Cache, Name, 1) or (Length(Name^) = 0) or
      not IsReadable(Cache, Name, Length(Name^) + 1) then
      Exit;
    if Depth = 0 then
      Result := TClass(VMT);
    {The parent is reached through a reference to its VMT (nil for TObject).}
    if Parent = nil then
      Exit;
    if (NativeUInt(Parent) and (SizeOf(Pointer) - 1) <> 0) or not IsReadable(Cache, Parent, SizeOf(Pointer)) then
      Break;
    VMT := PPointer(Parent)^;
  end;
  Result := nil;
end;

function FastMM_DetectStringData(APMemoryBlock: Pointer; AAvailableSpaceInBlock: NativeInt): TFastMM_StringDataType;
type
  {The header of a string block of this compiler's RTL: Delphi's StrRec; Free Pascal's
  TAnsiRec / TUnicodeRec (3.2: reference count and length are SizeInt).}
  PStringHeader = ^TStringHeader;
  TStringHeader = packed record
{$ifdef FPC}
    CodePage: Word;
    ElementSize: Word;
  {$ifdef CPU64}
    Padding: Cardinal;
  {$endif}
    RefCount: SizeInt;
    Length: SizeInt;
{$else}
  {$ifdef CPUX64}
    Padding: Cardinal;
  {$endif}
    CodePage: Word;
    ElementSize: Word;
    RefCount: Integer;
    Length: Integer;
{$endif}
  end;
const
  {FastMM5's limits: a reference count above 255 is taken for something else, and so is a
  character below tab.}
  CMaxRefCount = 255;
  CMinCharCode = 9;
var
  Header: PStringHeader;
  Len, I: NativeInt;
  ElementSize: Integer;
  Chars: PByte;
begin
  Result := sdtNotAString;
  if (APMemoryBlock = nil) or (AAvailableSpaceInBlock < SizeOf(TStringHeader) + 2) then
    Exit;
  Header := APMemoryBlock;
  if Header^.RefCount > CMaxRefCount then
    Exit;
  ElementSize := Header^.ElementSize;
  if (ElementSize <> 1) and (ElementSize <> 2) then
    Exit;
  Len := Header^.Length;
  if (Len <= 0) or (Len >= (AAvailableSpaceInBlock - SizeOf(TStringHeader)) div ElementSize) then
    Exit;
  Chars := PByte(APMemoryBlock) + SizeOf(TStringHeader);
  if ElementSize = 1 then
  begin
    if Chars[Len] <> 0 then
      Exit;
    for I := 0 to Len - 1 do
      if Chars[I] < CMinCharCode then
        Exit;
    Result := sdtAnsiString;
  end
  else
  begin
    if PWord(Chars + 2 * Len)^ <> 0 then
      Exit;
    for I := 0 to Len - 1 do
      if PWord(Chars + 2 * I)^ < CMinCharCode then
        Exit;
    Result := sdtUnicodeString;
  end;
end;

{------------------------The DLL's walk of its blocks------------------------}

{Every routine below that looks at blocks goes through fastmm_walk_blocks. The DLL calls back with
none of its locks held; a block freed by another thread meanwhile may still be reported, so a
block's bytes are read only after IsReadable says they can be.}

function FMMC_VirtualAlloc(AAddress: Pointer; ASize: NativeUInt; AAllocationType, AProtect: Cardinal): Pointer;
  stdcall; external kernel32 name 'VirtualAlloc';
function FMMC_VirtualFree(AAddress: Pointer; ASize: NativeUInt; AFreeType: Cardinal): LongBool;
  stdcall; external kernel32 name 'VirtualFree';

const
  CMemRelease = $8000;
  {fastmm_block_info.block_type: FastMM5's TFastMM_WalkAllocatedBlocksBlockType, in order.}
  CDllLargeBlock = 0;
  CDllMediumBlockSpan = 1;
  CDllMediumBlock = 2;
  CDllSmallBlockSpan = 3;
  CDllSmallBlock = 4;
  CAllBlockTypes = [Low(TFastMM_WalkAllocatedBlocksBlockType)..High(TFastMM_WalkAllocatedBlocksBlockType)];
  CUsedBlockTypes = [btLargeBlock, btMediumBlock, btSmallBlock];

{Working memory for a walk's callback, from the OS: the blocks being looked at are the heap's.}
function AllocateWorkingMemory(ASize: NativeUInt): Pointer;
begin
  Result := FMMC_VirtualAlloc(nil, ASize, CMemCommit or CMemReserve, CPageReadWrite);
end;

procedure FreeWorkingMemory(P: Pointer);
begin
  if P <> nil then
    FMMC_VirtualFree(P, 0, CMemRelease);
end;

function DllHasWalk: Boolean;
begin
  Result := (Dll.Handle <> 0) and Assigned(Dll.WalkBlocks);
end;

{fastmm_walk_blocks for the kinds in ATypes; False when the DLL has no walk or an arena was
skipped.}
function DllWalk(ACallback: TDll_WalkCallback; AData: Pointer; ATypes: TFastMM_WalkBlocksBlockTypes;
  AUsedBlocksOnly: Boolean; ALockTimeoutMilliseconds, AMinimumAllocationGroup, AMaximumAllocationGroup: Cardinal): Boolean;
var
  Mask: Cardinal;
  T: TFastMM_WalkAllocatedBlocksBlockType;
begin
  Result := False;
  if not DllHasWalk or (ATypes = []) then
    Exit;
  Mask := 0;
  for T := Low(T) to High(T) do
    if T in ATypes then
      Mask := Mask or (Cardinal(1) shl Ord(T));
  Result := Dll.WalkBlocks(ACallback, AData, Mask, Ord(AUsedBlocksOnly), ALockTimeoutMilliseconds,
    AMinimumAllocationGroup, AMaximumAllocationGroup) <> 0;
end;

procedure BlockInfoFromDll(const AInfo: TDll_BlockInfo; var ABlockInfo: TFastMM_WalkAllocatedBlocks_BlockInfo);
begin
  FillChar(ABlockInfo, SizeOf(ABlockInfo), 0);
  ABlockInfo.BlockAddress := AInfo.BlockAddress;
  ABlockInfo.DebugInformation := AInfo.DebugHeader;
  ABlockInfo.BlockSize := NativeInt(AInfo.BlockSize);
  ABlockInfo.UsableSize := NativeInt(AInfo.UsableSize);
  ABlockInfo.ArenaIndex := AInfo.ArenaIndex;
  ABlockInfo.BlockType := TFastMM_WalkAllocatedBlocksBlockType(AInfo.BlockType);
  ABlockInfo.BlockIsFree := AInfo.BlockIsFree <> 0;
  case AInfo.BlockType of
    CDllMediumBlockSpan:
      begin
        ABlockInfo.IsSequentialFeedMediumBlockSpan := AInfo.IsSequentialFeedSpan <> 0;
        ABlockInfo.MediumBlockSequentialFeedSpanUnusedBytes := Integer(AInfo.SequentialFeedUnusedBytes);
      end;
    CDllSmallBlockSpan:
      begin
        ABlockInfo.IsSequentialFeedSmallBlockSpan := AInfo.IsSequentialFeedSpan <> 0;
        ABlockInfo.SmallBlockSpanBlockSize := Word(AInfo.SmallBlockSpanBlockSize);
        ABlockInfo.SmallBlockSequentialFeedSpanUnusedBytes := Integer(AInfo.SequentialFeedUnusedBytes);
      end;
  end;
end;

type
  PWalkThunk = ^TWalkThunk;
  TWalkThunk = record
    Callback: TFastMM_WalkBlocksCallback;
    UserData: Pointer;
    {An exception ACallBack raised: caught here, so that it never unwinds through the DLL, and raised
    again once the walk has returned.}
    RaisedObject: Pointer;
  end;

procedure WalkThunk(AInfo: PDll_BlockInfo; AUserData: Pointer); cdecl;
var
  Thunk: PWalkThunk;
  BlockInfo: TFastMM_WalkAllocatedBlocks_BlockInfo;
begin
  Thunk := AUserData;
  if Thunk^.RaisedObject <> nil then
    Exit;
  BlockInfoFromDll(AInfo^, BlockInfo);
  BlockInfo.UserData := Thunk^.UserData;
  try
    Thunk^.Callback(BlockInfo);
  except
    Thunk^.RaisedObject := AcquireExceptionObject;
  end;
end;

function FastMM_WalkBlocks(ACallBack: TFastMM_WalkBlocksCallback; AWalkBlockTypes: TFastMM_WalkBlocksBlockTypes;
  AWalkUsedBlocksOnly: Boolean; AUserData: Pointer; ALockTimeoutMilliseconds: Cardinal;
  AMinimumAllocationGroup: Cardinal; AMaximumAllocationGroup: Cardinal): Boolean;
var
  Thunk: TWalkThunk;
begin
  Result := False;
  if not Assigned(ACallBack) then
    Exit;
  Thunk.Callback := ACallBack;
  Thunk.UserData := AUserData;
  Thunk.RaisedObject := nil;
  if AWalkBlockTypes = [] then
    AWalkBlockTypes := CAllBlockTypes;
  Result := DllWalk(@WalkThunk, @Thunk, AWalkBlockTypes, AWalkUsedBlocksOnly, ALockTimeoutMilliseconds,
    AMinimumAllocationGroup, AMaximumAllocationGroup);
  if Thunk.RaisedObject <> nil then
    raise TObject(Thunk.RaisedObject);
end;

{------------------------The memory map------------------------}

procedure MemoryMapCallback(AInfo: PDll_BlockInfo; AUserData: Pointer); cdecl;
var
  Map: ^TMemoryMap;
  Start, First, Last, I: NativeUInt;
begin
  Map := AUserData;
  if AInfo^.BlockIsFree <> 0 then
    Exit;
  Start := NativeUInt(AInfo^.BlockAddress);
  {A large block's mapping starts at the 64 KB boundary its header word (BlockAddress - 4) lies in.}
  if AInfo^.BlockType = CDllLargeBlock then
    Start := (Start - 4) and not NativeUInt($FFFF);
  First := Start shr 16;
  if First > High(TMemoryMap) then
    Exit;
  Last := First + (AInfo^.BlockSize - 1) shr 16;
  if Last > High(TMemoryMap) then
    Last := High(TMemoryMap);
  for I := First to Last do
    Map^[I] := csAllocated;
end;

procedure FastMM_GetMemoryMap(var AMemoryMap: TMemoryMap; ALockTimeoutMilliseconds: Cardinal);
const
  CChunkSize = 65536;
var
  Chunk, Next, Last: NativeUInt;
  Info: TFMMC_MemoryBasicInformation;
  Status: TChunkStatus;
begin
  FillChar(AMemoryMap, SizeOf(AMemoryMap), Ord(csUnallocated));
  Last := High(AMemoryMap);
  {FastMM5's: the medium spans and large blocks are csAllocated. A DLL without the walk: the 64 KB
  regions its page map marks.}
  if DllHasWalk then
    DllWalk(@MemoryMapCallback, @AMemoryMap, [btLargeBlock, btMediumBlockSpan], False, ALockTimeoutMilliseconds,
      0, $ffffffff)
  else
    for Chunk := 0 to Last do
      if InDllMemory(Pointer(Chunk * CChunkSize)) then
        AMemoryMap[Chunk] := csAllocated;
  Chunk := 0;
  while Chunk <= Last do
  begin
    if AMemoryMap[Chunk] <> csUnallocated then
    begin
      Inc(Chunk);
      Continue;
    end;
    if FMMC_VirtualQuery(Pointer(Chunk * CChunkSize), Info, SizeOf(Info)) = 0 then
    begin
      {Beyond what the process may address (a 32-bit program without the large address flag).}
      while Chunk <= Last do
      begin
        if AMemoryMap[Chunk] = csUnallocated then
          AMemoryMap[Chunk] := csSysReserved;
        Inc(Chunk);
      end;
      Break;
    end;
    Next := (NativeUInt(Info.BaseAddress) + Info.RegionSize + CChunkSize - 1) div CChunkSize;
    if Next <= Chunk then
      Next := Chunk + 1;
    if Info.State = CMemCommit then
      Status := csSysAllocated
    else if Info.State = CMemReserve then
      Status := csSysReserved
    else
      Status := csUnallocated;
    while (Chunk < Next) and (Chunk <= Last) do
    begin
      if AMemoryMap[Chunk] = csUnallocated then
        AMemoryMap[Chunk] := Status;
      Inc(Chunk);
    end;
  end;
end;

{------------------------The memory manager's state------------------------}

{The size class of a block or span whose slots are ASlot bytes (the types are in ascending order).}
function SmallTypeIndex(const AState: TFastMM_MemoryManagerState; ASlot: NativeUInt): Integer;
begin
  Result := 0;
  while (Result < Integer(AState.SmallBlockTypeCount) - 1) and
    (AState.SmallBlockTypeStates[Result].InternalBlockSize < ASlot) do
    Inc(Result);
end;

{FastMM5's sums: a small span's memory counts for its size class, not for medium blocks.}
procedure ManagerStateCallback(AInfo: PDll_BlockInfo; AUserData: Pointer); cdecl;
var
  State: ^TFastMM_MemoryManagerState;
  I: Integer;
begin
  State := AUserData;
  case AInfo^.BlockType of
    CDllLargeBlock:
      begin
        Inc(State^.ReservedLargeBlockAddressSpace, AInfo^.BlockSize);
        if AInfo^.BlockIsFree = 0 then
        begin
          Inc(State^.AllocatedLargeBlockCount);
          Inc(State^.TotalAllocatedLargeBlockSize, AInfo^.UsableSize);
        end;
      end;
    CDllMediumBlockSpan:
      Inc(State^.ReservedMediumBlockAddressSpace, AInfo^.BlockSize);
    CDllMediumBlock:
      if AInfo^.BlockIsFree = 0 then
      begin
        Inc(State^.AllocatedMediumBlockCount);
        Inc(State^.TotalAllocatedMediumBlockSize, AInfo^.UsableSize);
      end;
    CDllSmallBlockSpan:
      begin
        I := SmallTypeIndex(State^, AInfo^.SmallBlockSpanBlockSize);
        Inc(State^.SmallBlockTypeStates[I].ReservedAddressSpace, AInfo^.BlockSize);
        Dec(State^.ReservedMediumBlockAddressSpace, AInfo^.BlockSize);
      end;
    CDllSmallBlock:
      if AInfo^.BlockIsFree = 0 then
      begin
        I := SmallTypeIndex(State^, AInfo^.BlockSize);
        Inc(State^.SmallBlockTypeStates[I].AllocatedBlockCount);
      end;
  end;
end;

procedure FastMM_GetMemoryManagerState(var AMemoryManagerState: TFastMM_MemoryManagerState;
  ALockTimeoutMilliseconds: Cardinal);
var
  S: TFastMMC_State;
  Usage: array[0..63] of TFastMMC_KindUsage;
  I, N: Integer;
  Slot: NativeUInt;
begin
  FillChar(AMemoryManagerState, SizeOf(AMemoryManagerState), 0);
  if not FastMMC_GetState(S) then
    Exit;
  {The DLL's small size classes, in ascending order.}
  N := S.SmallClassCount;
  if N > Length(AMemoryManagerState.SmallBlockTypeStates) then
    N := Length(AMemoryManagerState.SmallBlockTypeStates);
  AMemoryManagerState.SmallBlockTypeCount := N;
  for I := 0 to N - 1 do
  begin
    Slot := Dll.SmallClassSlotSize(I);
    AMemoryManagerState.SmallBlockTypeStates[I].InternalBlockSize := Slot;
    AMemoryManagerState.SmallBlockTypeStates[I].UseableBlockSize := Minus(Slot, 4);
  end;
  {FastMM5's: every block and span walked, a block in a thread's cache counted free.}
  if DllHasWalk then
  begin
    DllWalk(@ManagerStateCallback, @AMemoryManagerState, CAllBlockTypes, False, ALockTimeoutMilliseconds, 0, $ffffffff);
    Exit;
  end;
  {An older DLL: its counters.}
  FillChar(Usage, SizeOf(Usage), 0);
  if Assigned(Dll.GetSmallClassUsage) then
    Dll.GetSmallClassUsage(@Usage[0], N);
  for I := 0 to N - 1 do
  begin
    AMemoryManagerState.SmallBlockTypeStates[I].AllocatedBlockCount := Usage[I].BlocksInUse;
    AMemoryManagerState.SmallBlockTypeStates[I].ReservedAddressSpace := Usage[I].BytesReserved;
  end;
  AMemoryManagerState.AllocatedMediumBlockCount := S.Medium.BlocksInUse;
  AMemoryManagerState.TotalAllocatedMediumBlockSize := S.Medium.BytesInUse;
  AMemoryManagerState.ReservedMediumBlockAddressSpace := S.Medium.BytesReserved;
  AMemoryManagerState.AllocatedLargeBlockCount := S.Large.BlocksInUse;
  AMemoryManagerState.TotalAllocatedLargeBlockSize := S.Large.BytesInUse;
  AMemoryManagerState.ReservedLargeBlockAddressSpace := S.Large.BytesReserved;
end;

{------------------------What a block holds------------------------}

const
  {The kinds of content that are not a class (a class is its VMT's address, above 65535).}
  CContentUnknown = 0;
  CContentAnsiString = 1;
  CContentUnicodeString = 2;
  CUnknownName: ShortString = 'Unknown';
  CAnsiStringName: ShortString = 'AnsiString';
  CUnicodeStringName: ShortString = 'UnicodeString';

{What a block in use holds, as FastMM5 tells (DetectBlockContentType): an object's class, a
string, or unknown. Nothing is read that IsReadable does not allow.}
function BlockContentType(var ACache: TReadableCache; ABlock: Pointer; AUsable: NativeUInt): NativeUInt;
var
  C: TClass;
begin
  Result := CContentUnknown;
  if (AUsable < SizeOf(Pointer)) or not IsReadable(ACache, ABlock, SizeOf(Pointer)) then
    Exit;
  C := FastMM_DetectClassInstance(ABlock);
  if C <> nil then
    Exit(NativeUInt(C));
  if IsReadable(ACache, ABlock, AUsable) then
    case FastMM_DetectStringData(ABlock, NativeInt(AUsable)) of
      sdtAnsiString: Result := CContentAnsiString;
      sdtUnicodeString: Result := CContentUnicodeString;
    end;
end;

function ContentName(AContentType: NativeUInt): PShortString;
begin
  case AContentType of
    CContentUnknown: Result := @CUnknownName;
    CContentAnsiString: Result := @CAnsiStringName;
    CContentUnicodeString: Result := @CUnicodeStringName;
  else
    Result := PPointer(PByte(AContentType) + vmtClassName)^;
  end;
end;

{------------------------The state log------------------------}

const
  CMaxStateLogNodes = 100000;
  {A power of two above twice the nodes: the open-addressing table finds a content type quickly.}
  CStateLogSlots = 262144;

type
  TStateLogNode = record
    ContentType: NativeUInt;
    InstanceCount: NativeInt;
    TotalMemoryUsage: NativeInt;
  end;
  PStateLog = ^TStateLog;
  TStateLog = record
    SubtractUsage: Boolean;
    NodeCount: Integer;
    Cache: TReadableCache;
    {The node of each content type, found by hashing it (node index + 1; 0: empty).}
    Slots: array[0..CStateLogSlots - 1] of Integer;
    Nodes: array[0..CMaxStateLogNodes - 1] of TStateLogNode;
    Order: array[0..CMaxStateLogNodes - 1] of Integer;
  end;

{The node of AContentType; a new one when ACreate, else nil when there is none.}
function StateLogNode(ALog: PStateLog; AContentType: NativeUInt; ACreate: Boolean): Integer;
var
  Slot: NativeUInt;
begin
  Slot := ((AContentType shr 3) * 2654435761) and (CStateLogSlots - 1);
  while ALog^.Slots[Slot] <> 0 do
  begin
    if ALog^.Nodes[ALog^.Slots[Slot] - 1].ContentType = AContentType then
      Exit(ALog^.Slots[Slot] - 1);
    Slot := (Slot + 1) and (CStateLogSlots - 1);
  end;
  Result := -1;
  if not ACreate or (ALog^.NodeCount = CMaxStateLogNodes) then
    Exit;
  Result := ALog^.NodeCount;
  Inc(ALog^.NodeCount);
  ALog^.Nodes[Result].ContentType := AContentType;
  ALog^.Nodes[Result].InstanceCount := 0;
  ALog^.Nodes[Result].TotalMemoryUsage := 0;
  ALog^.Slots[Slot] := Result + 1;
end;

procedure StateLogCallback(AInfo: PDll_BlockInfo; AUserData: Pointer); cdecl;
var
  Log: PStateLog;
  First: NativeUInt;
  Node: Integer;
begin
  Log := AUserData;
  Node := -1;
  {Detecting a class costs VirtualQuery calls: a first pointer that is a class already seen is taken
  as that class, as FastMM5 does.}
  if (AInfo^.UsableSize >= SizeOf(Pointer)) and IsReadable(Log^.Cache, AInfo^.BlockAddress, SizeOf(Pointer)) then
  begin
    First := PNativeUInt(AInfo^.BlockAddress)^;
    if (First > 65535) and (First and (SizeOf(Pointer) - 1) = 0) then
      Node := StateLogNode(Log, First, False);
  end;
  if Node < 0 then
    Node := StateLogNode(Log, BlockContentType(Log^.Cache, AInfo^.BlockAddress, AInfo^.UsableSize), True);
  if Node < 0 then
    Exit;
  if Log^.SubtractUsage then
  begin
    Dec(Log^.Nodes[Node].InstanceCount);
    Dec(Log^.Nodes[Node].TotalMemoryUsage, AInfo^.UsableSize);
  end
  else
  begin
    Inc(Log^.Nodes[Node].InstanceCount);
    Inc(Log^.Nodes[Node].TotalMemoryUsage, AInfo^.UsableSize);
  end;
end;

{Does node A sort after node B? Descending total, then by name; or by name.}
function StateLogAfter(ALog: PStateLog; A, B: Integer; ASortOrder: TFastMM_LogStateToFile_SortOrder): Boolean;
begin
  if ASortOrder = soDescendingTotalMemoryUsage then
  begin
    if ALog^.Nodes[A].TotalMemoryUsage <> ALog^.Nodes[B].TotalMemoryUsage then
      Exit(ALog^.Nodes[A].TotalMemoryUsage < ALog^.Nodes[B].TotalMemoryUsage);
  end;
  Result := ContentName(ALog^.Nodes[A].ContentType)^ > ContentName(ALog^.Nodes[B].ContentType)^;
end;

procedure StateLogSort(ALog: PStateLog; ASortOrder: TFastMM_LogStateToFile_SortOrder);
var
  Gap, I, J, V: Integer;
begin
  for I := 0 to ALog^.NodeCount - 1 do
    ALog^.Order[I] := I;
  Gap := 1;
  while Gap < ALog^.NodeCount div 3 do
    Gap := Gap * 3 + 1;
  while Gap > 0 do
  begin
    for I := Gap to ALog^.NodeCount - 1 do
    begin
      V := ALog^.Order[I];
      J := I;
      while (J >= Gap) and StateLogAfter(ALog, ALog^.Order[J - Gap], V, ASortOrder) do
      begin
        ALog^.Order[J] := ALog^.Order[J - Gap];
        Dec(J, Gap);
      end;
      ALog^.Order[J] := V;
    end;
    Gap := Gap div 3;
  end;
end;

procedure TextAddKind(var T: TFMMC_Text; const AName: ShortString; const U: TFastMMC_KindUsage);
begin
  TextAdd(T, AName);
  TextAddUInt(T, U.BlocksInUse);
  TextAdd(T, ' blocks, ');
  TextAddUInt(T, U.BytesInUse);
  TextAdd(T, ' bytes in use, ');
  TextAddUInt(T, U.BytesReserved);
  TextAddLine(T, ' bytes reserved');
end;

function IntToShort(V: NativeInt): ShortString;
begin
  if V < 0 then
    Result := '-' + UIntToStr(NativeUInt(-V))
  else
    Result := UIntToStr(NativeUInt(V));
end;

function FastMM_LogStateToFile(APFilename: PWideChar; APAdditionalDetails: PWideChar;
  ATruncateFile: Boolean; ASortOrder: TFastMM_LogStateToFile_SortOrder;
  ALockTimeoutMilliseconds: Cardinal; AAddUsageInAllocationGroupsFrom: Cardinal;
  AAddUsageInAllocationGroupsUpTo: Cardinal; ASubtractUsageInAllocationGroupsFrom: Cardinal;
  ASubtractUsageInAllocationGroupsUpTo: Cardinal): Boolean;
var
  S: TFastMMC_State;
  T: TFMMC_Text;
  Tokens: TFMMC_Tokens;
  Name: array[0..CMaxPath] of WideChar;
  N, I, Kept: Integer;
  Summary: TFastMM_UsageSummary;
  Log: PStateLog;
  Node: ^TStateLogNode;
  Truncate, Written: Boolean;

  {The text so far to the file, when it nears the buffer's end (and at the end).}
  procedure Flush(AForce: Boolean);
  begin
    if (T.Len = 0) or (not AForce and (T.Len < CTextCapacity - 1024)) then
      Exit;
    Written := WriteTextFile(APFilename, T, Truncate) and Written;
    Truncate := False;
    TextClear(T);
  end;

begin
  Result := False;
  if not FastMMC_GetState(S) then
    Exit;
  if APFilename = nil then
  begin
    N := ApplicationBaseName(Name);
    WideAppendAscii(Name, N, '_MemoryManager_StateLog.txt');
    APFilename := @Name[0];
  end;
  Summary := FastMM_GetUsageSummary(ALockTimeoutMilliseconds);
  TokensClear(Tokens);
  TokensSetGeneral(Tokens);
  TokenSetShort(Tokens, CTokenAllocatedKB, UIntToStr(Summary.AllocatedBytes div 1024));
  TokenSetShort(Tokens, CTokenOverheadKB, UIntToStr(Summary.OverheadBytes div 1024));
  TokenSetShort(Tokens, CTokenEfficiencyPercentage, UIntToStr(NativeUInt(Round(Summary.EfficiencyPercentage))));
  TextClear(T);
  TextAddTemplate(T, FastMM_LogStateToFileTemplate, Tokens);
  Written := True;
  Truncate := ATruncateFile;
  Log := nil;
  if DllHasWalk then
    Log := AllocateWorkingMemory(SizeOf(TStateLog));
  if Log <> nil then
  begin
    {FastMM5's detail: the blocks in use of the groups asked for, by content; a second walk takes
    off those of the groups to subtract.}
    DllWalk(@StateLogCallback, Log, CUsedBlockTypes, True, ALockTimeoutMilliseconds,
      AAddUsageInAllocationGroupsFrom, AAddUsageInAllocationGroupsUpTo);
    if ASubtractUsageInAllocationGroupsFrom <= ASubtractUsageInAllocationGroupsUpTo then
    begin
      Log^.SubtractUsage := True;
      DllWalk(@StateLogCallback, Log, CUsedBlockTypes, True, ALockTimeoutMilliseconds,
        ASubtractUsageInAllocationGroupsFrom, ASubtractUsageInAllocationGroupsUpTo);
      Kept := 0;
      for I := 0 to Log^.NodeCount - 1 do
        if (Log^.Nodes[I].InstanceCount <> 0) or (Log^.Nodes[I].TotalMemoryUsage <> 0) then
        begin
          Log^.Nodes[Kept] := Log^.Nodes[I];
          Inc(Kept);
        end;
      Log^.NodeCount := Kept;
    end;
    StateLogSort(Log, ASortOrder);
    for I := 0 to Log^.NodeCount - 1 do
    begin
      Node := @Log^.Nodes[Log^.Order[I]];
      TokensClear(Tokens);
      TokenSetShort(Tokens, CTokenClassTotalBytes, IntToShort(Node^.TotalMemoryUsage));
      TokenSetShort(Tokens, CTokenObjectClass, ContentName(Node^.ContentType)^);
      TokenSetShort(Tokens, CTokenClassInstanceCount, IntToShort(Node^.InstanceCount));
      if Node^.InstanceCount <> 0 then
        TokenSetShort(Tokens, CTokenClassAverageBytes, IntToShort(Round(Node^.TotalMemoryUsage / Node^.InstanceCount)))
      else
        TokenSetShort(Tokens, CTokenClassAverageBytes, '0');
      TextAddTemplate(T, FastMM_LogStateToFileTemplate_UsageDetail, Tokens);
      Flush(False);
    end;
    FreeWorkingMemory(Log);
  end
  else
  begin
    {An older DLL: by block kind.}
    TextAddKind(T, 'Small blocks: ', S.Small);
    TextAddKind(T, 'Medium blocks: ', S.Medium);
    TextAddKind(T, 'Large blocks: ', S.Large);
  end;
  if APAdditionalDetails <> nil then
  begin
    TextAdd(T, #13#10);
    TextAddWide(T, APAdditionalDetails);
  end;
  Flush(True);
  Result := Written;
end;

{------------------------The usage report------------------------}

function FastMM_WriteUsageReport(APFilename: PWideChar): Boolean;
var
  Name: array[0..CMaxPath] of WideChar;
  Ansi: array[0..2 * CMaxPath] of AnsiChar;
  N: Integer;
begin
  Result := False;
  if (Dll.Handle = 0) or not Assigned(Dll.WriteUsageReport) then
    Exit;
  if APFilename = nil then
  begin
    N := ApplicationBaseName(Name);
    WideAppendAscii(Name, N, '_MemoryManager_UsageReport.html');
    APFilename := @Name[0];
  end;
  {The DLL takes the path in the ANSI code page, as the event log's.}
  N := FMMC_WideCharToMultiByte(0 {CP_ACP}, 0, APFilename, -1, @Ansi[0], High(Ansi), nil, nil);
  if N <= 1 then
    Exit;
  Result := Dll.WriteUsageReport(@Ansi[0]) <> 0;
end;

{------------------------The debug block header------------------------}

function TFastMM_DebugBlockHeader.DebugFooterPtr: PCardinal;
begin
  Result := PCardinal(PByte(@Self) + SizeOf(TFastMM_DebugBlockHeader) + UserSize);
end;

function TFastMM_DebugBlockHeader.DebugFooter_AllocationStackTracePtr: PNativeUInt;
begin
  Result := PNativeUInt(PByte(@Self) + SizeOf(TFastMM_DebugBlockHeader) + UserSize + SizeOf(Cardinal));
end;

function TFastMM_DebugBlockHeader.DebugFooter_FreeStackTracePtr: PNativeUInt;
begin
  Result := PNativeUInt(PByte(@Self) + SizeOf(TFastMM_DebugBlockHeader) + UserSize + SizeOf(Cardinal) +
    StackTraceEntryCount * SizeOf(Pointer));
end;

function TFastMM_DebugBlockHeader.CalculateHeaderCheckSum: Cardinal;
var
  P, PEnd: PCardinal;
begin
  {The Cardinals after HeaderCheckSum, to the end of the header.}
  P := @HeaderCheckSum;
  Inc(P);
  PEnd := PCardinal(PByte(@Self) + SizeOf(TFastMM_DebugBlockHeader));
  Result := $FFFFFFFF;
  while P <> PEnd do
  begin
    Result := Result xor P^;
    Inc(P);
  end;
end;

function TFastMM_DebugBlockHeader.CalculateFooterCheckSum: Cardinal;
var
  P, PEnd: PCardinal;
begin
  {Both stack traces, which follow the footer checksum.}
  P := PCardinal(DebugFooter_AllocationStackTracePtr);
  PEnd := PCardinal(PByte(P) + StackTraceEntryCount * 2 * SizeOf(Pointer));
  Result := $FFFFFFFF;
  while P <> PEnd do
  begin
    Result := Result xor P^;
    Inc(P);
  end;
end;

procedure TFastMM_DebugBlockHeader.CalculateAndSetHeaderAndFooterCheckSums;
begin
  HeaderCheckSum := CalculateHeaderCheckSum;
  DebugFooterPtr^ := CalculateFooterCheckSum;
end;

{------------------------Debug mode------------------------}

{A mode (debug, erase new blocks, erase freed blocks) as FastMM5 switches it: Counter is the
Enter/Begin calls less the Exit/End calls, whatever their result; the DLL's mode follows the
counter (0 to 1 switches it on, 1 to 0 off) when fastmm-c is installed in this module and its
memory manager is still the one installed. Active says this module switched it on.}
type
  TModeSwitch = record
    Counter: Integer;
    Active: Boolean;
  end;

var
  ModeLock: TFMMC_CriticalSection;
  DebugModeSwitch, EraseAllocatedSwitch, EraseFreedSwitch: TModeSwitch;
  DebugSupportConfigured: Boolean;
  DebugModeOptions: TFastMM_DebugModeOptions = [dmoNeverFreeSmallBlockSpans, dmoNeverMergeFreeMediumBlocks];

{The DLL's switches for a mode: entering/leaving debug mode, beginning/ending an erase mode.}
procedure SwitchDll(AMode: Integer; AOn: Boolean);
begin
  case AMode of
    0:
      if AOn then
        Dll.EnterDebugMode()
      else
        Dll.ExitDebugMode();
    1:
      if AOn then
        Dll.BeginEraseAllocated()
      else
        Dll.EndEraseAllocated();
  else
    if AOn then
      Dll.BeginEraseFreed()
    else
      Dll.EndEraseFreed();
  end;
end;

function DllHasModes: Boolean;
begin
  Result := (Dll.Handle <> 0) and Assigned(Dll.EnterDebugMode) and Assigned(Dll.ExitDebugMode) and
    Assigned(Dll.BeginEraseAllocated) and Assigned(Dll.EndEraseAllocated) and Assigned(Dll.BeginEraseFreed) and
    Assigned(Dll.EndEraseFreed);
end;

var
  {True while the DLL reads FastMM5's variables of this module (fastmm_bind_variables: this module
  installed fastmm-c first).}
  VariablesBound: Boolean;

{Without the binding the DLL has its own switch, which the unit sets from the variable.}
procedure PassScanSwitchToDll;
begin
  if (Dll.Handle <> 0) and Assigned(Dll.SetScanBeforeEveryOperation) and not VariablesBound then
    Dll.SetScanBeforeEveryOperation(Ord(FastMM_DebugMode_ScanForCorruptionBeforeEveryOperation));
end;

function AdjustMode(var ASwitch: TModeSwitch; AMode, AAdjustment: Integer): Boolean;
begin
  FMMC_EnterCriticalSection(ModeLock);
  Inc(ASwitch.Counter, AAdjustment);
  if not (FastMMC_Installed and DllHasModes) then
    Result := False
  else if (ASwitch.Counter > 0) = ASwitch.Active then
    Result := True
  else if not RecordStillOurs then
    Result := False
  else
  begin
    if (AMode = 0) and (ASwitch.Counter > 0) then
    begin
      {FastMM5 tries the support library the first time, unless the program set both handlers.}
      if (not DebugSupportConfigured) and ((CodeOf(FastMM_GetStackTrace) = Pointer(@FastMM_NoOpGetStackTrace)) or
        (CodeOf(FastMM_ConvertStackTraceToText) = Pointer(@FastMM_NoOpConvertStackTraceToText))) then
        FastMM_LoadDebugSupportLibrary;
      DebugSupportConfigured := True;
      PassScanSwitchToDll;
    end;
    SwitchDll(AMode, ASwitch.Counter > 0);
    ASwitch.Active := ASwitch.Counter > 0;
    Result := True;
  end;
  FMMC_LeaveCriticalSection(ModeLock);
end;

function FastMM_EnterDebugMode: Boolean;
begin
  Result := AdjustMode(DebugModeSwitch, 0, 1);
end;

function FastMM_ExitDebugMode: Boolean;
begin
  Result := AdjustMode(DebugModeSwitch, 0, -1);
end;

function FastMM_DebugModeActive: Boolean;
begin
  Result := (Dll.Handle <> 0) and Assigned(Dll.DebugModeActive) and (Dll.DebugModeActive() <> 0);
end;

function FastMM_GetDebugModeOptions: TFastMM_DebugModeOptions;
begin
  Result := DebugModeOptions;
end;

procedure FastMM_SetDebugModeOptions(ADebugModeOptions: TFastMM_DebugModeOptions);
var
  Option: TFastMM_DebugModeOption;
  Bits: Cardinal;
begin
  DebugModeOptions := ADebugModeOptions;
  {Bit i is option i (include/fastmm.h, FASTMM_DMO_*).}
  Bits := 0;
  for Option := Low(Option) to High(Option) do
    if Option in ADebugModeOptions then
      Bits := Bits or (Cardinal(1) shl Ord(Option));
  if (Dll.Handle <> 0) and Assigned(Dll.SetDebugModeOptions) then
    Dll.SetDebugModeOptions(Bits);
end;

function FastMM_ScanDebugBlocksForCorruption(ALockTimeoutMilliseconds: Cardinal): Boolean;
begin
  PassScanSwitchToDll;
  {The DLL reports every damaged block to the event log; then, as FastMM5, an invalid pointer
  error (EInvalidPointer with SysUtils).}
  if (Dll.Handle <> 0) and Assigned(Dll.ScanDebugBlocks) and (Dll.ScanDebugBlocks() = 0) then
    HeapError(204);
  Result := True;
end;

function FastMM_GetDebugModeStackTraceEntryCount: Byte;
begin
  if (Dll.Handle <> 0) and Assigned(Dll.GetStackTraceEntryCount) then
    Result := Dll.GetStackTraceEntryCount()
  else
    Result := 0;
end;

procedure FastMM_SetDebugModeStackTraceEntryCount(AStackTraceEntryCount: Byte);
begin
  if (Dll.Handle <> 0) and Assigned(Dll.SetStackTraceEntryCount) then
    Dll.SetStackTraceEntryCount(AStackTraceEntryCount);
end;

function FastMM_BeginEraseAllocatedBlockContent: Boolean;
begin
  Result := AdjustMode(EraseAllocatedSwitch, 1, 1);
end;

function FastMM_EndEraseAllocatedBlockContent: Boolean;
begin
  Result := AdjustMode(EraseAllocatedSwitch, 1, -1);
end;

function FastMM_EraseAllocatedBlockContentActive: Boolean;
begin
  Result := (Dll.Handle <> 0) and Assigned(Dll.EraseAllocatedActive) and (Dll.EraseAllocatedActive() <> 0);
end;

function FastMM_BeginEraseFreedBlockContent: Boolean;
begin
  Result := AdjustMode(EraseFreedSwitch, 2, 1);
end;

function FastMM_EndEraseFreedBlockContent: Boolean;
begin
  Result := AdjustMode(EraseFreedSwitch, 2, -1);
end;

function FastMM_EraseFreedBlockContentActive: Boolean;
begin
  Result := (Dll.Handle <> 0) and Assigned(Dll.EraseFreedActive) and (Dll.EraseFreedActive() <> 0);
end;

procedure FastMM_SetMemoryUsageLimit(AMaximumAllowedMemoryUsage: NativeUInt);
begin
  if (Dll.Handle <> 0) and Assigned(Dll.SetMemoryUsageLimit) then
    Dll.SetMemoryUsageLimit(AMaximumAllowedMemoryUsage);
end;

function FastMM_GetMemoryUsageLimit: NativeUInt;
begin
  if (Dll.Handle <> 0) and Assigned(Dll.GetMemoryUsageLimit) then
    Result := Dll.GetMemoryUsageLimit()
  else
    Result := 0;
end;

procedure FastMMC_SetScanForCorruptionBeforeEveryOperation(AValue: Boolean);
begin
  FastMM_DebugMode_ScanForCorruptionBeforeEveryOperation := AValue;
  PassScanSwitchToDll;
end;

function FastMMC_ReportDebugBlockLeaks: NativeUInt;
begin
  PrepareLeakMatching;
  if (Dll.Handle <> 0) and Assigned(Dll.ReportLeaks) then
    Result := Dll.ReportLeaks()
  else
    Result := 0;
end;

function FastMMC_GetDebugEventCount(AKind: Integer): NativeUInt;
begin
  if (Dll.Handle <> 0) and Assigned(Dll.GetDebugEventCount) then
    Result := Dll.GetDebugEventCount(AKind)
  else
    Result := 0;
end;

{------------------------Debug mode entry points------------------------}

{Every block the DLL hands out is aligned to this.}
const
  CBlockAlignmentMask = 15;

{FastMM5's FastMM_Debug* scan first when asked, and raise on damage.}
procedure ScanBeforeOperationIfAsked;
begin
  if FastMM_DebugMode_ScanForCorruptionBeforeEveryOperation then
    FastMM_ScanDebugBlocksForCorruption;
end;

{With an older DLL (no fastmm_debug_* exports) the normal entry points stand in: a debug block
only while debug mode is on.}
function FastMM_DebugGetMem(ASize: NativeInt): Pointer;
begin
  ScanBeforeOperationIfAsked;
  if (Dll.Handle <> 0) and Assigned(Dll.DebugGetMem) then
    Result := Dll.DebugGetMem(ASize)
  else
    Result := FastMM_GetMem(ASize);
end;

function FastMM_DebugFreeMem(APointer: Pointer): Integer;
begin
  ScanBeforeOperationIfAsked;
  if NativeUInt(APointer) and CBlockAlignmentMask <> 0 then
    HeapError(204);
  {A debug block is checked and quarantined, any other block freed as usual.}
  if (Dll.Handle <> 0) and Assigned(Dll.DebugFreeMem) then
    Result := Dll.DebugFreeMem(APointer)
  else
    Result := FastMM_FreeMem(APointer);
end;

function FastMM_DebugReallocMem(APointer: Pointer; ANewSize: NativeInt): Pointer;
begin
  ScanBeforeOperationIfAsked;
  if NativeUInt(APointer) and CBlockAlignmentMask <> 0 then
    HeapError(204);
  {The result is a debug block: a normal block's bytes are copied into a new one.}
  if (Dll.Handle <> 0) and Assigned(Dll.DebugReallocMem) then
    Result := Dll.DebugReallocMem(APointer, ANewSize)
  else
    Result := FastMM_ReallocMem(APointer, ANewSize);
end;

function FastMM_DebugAllocMem(ASize: NativeInt): Pointer;
begin
  ScanBeforeOperationIfAsked;
  if (Dll.Handle <> 0) and Assigned(Dll.DebugAllocMem) then
    Result := Dll.DebugAllocMem(ASize)
  else
    Result := FastMM_AllocMem(ASize);
end;

{------------------------Stack traces and the support library------------------------}

procedure FastMM_NoOpGetStackTrace(APReturnAddresses: PNativeUInt; AMaxDepth, ASkipFrames: Cardinal);
var
  I: Cardinal;
begin
  for I := 1 to AMaxDepth do
  begin
    APReturnAddresses^ := 0;
    Inc(APReturnAddresses);
  end;
end;

function FastMM_NoOpConvertStackTraceToText(APReturnAddresses: PNativeUInt; AMaxDepth: Cardinal;
  APBufferPosition, APBufferEnd: PWideChar): PWideChar;
begin
  Result := APBufferPosition;
end;

var
  DebugSupportLibraryHandle: NativeUInt;

{The support library's LogStackTrace writes Latin-1 text: widened character by character.}
function LegacyLogStackTraceWrapper(APReturnAddresses: PNativeUInt; AMaxDepth: Cardinal;
  APBufferPosition, APBufferEnd: PWideChar): PWideChar;
var
  Ansi: array[0..64 * 256] of AnsiChar;
  P, PEnd: PAnsiChar;
begin
  Result := APBufferPosition;
  if not Assigned(DebugLibrary_LogStackTrace_Legacy) then
    Exit;
  if AMaxDepth > 64 then
    AMaxDepth := 64;
  PEnd := DebugLibrary_LogStackTrace_Legacy(APReturnAddresses, AMaxDepth, @Ansi[0]);
  P := @Ansi[0];
  while (P < PEnd) and (Result < APBufferEnd) do
  begin
    Result^ := WideChar(Ord(P^));
    Inc(Result);
    Inc(P);
  end;
end;

function FastMM_LoadDebugSupportLibrary: Boolean;
begin
  {The DLL takes and prints its debug blocks' stack traces through FastMM_GetStackTrace and
  FastMM_ConvertStackTraceToText while they are not the no-op routines (fastmm_bind_variables).}
  if DebugSupportLibraryHandle <> 0 then
    Exit(True);
  Result := False;
  if FastMM_DebugSupportLibraryName = nil then
    Exit;
  DebugSupportLibraryHandle := FMMC_LoadLibraryW(FastMM_DebugSupportLibraryName);
  if DebugSupportLibraryHandle = 0 then
    Exit;
  DebugLibrary_GetRawStackTrace := TFastMM_GetStackTrace(FMMC_GetProcAddress(DebugSupportLibraryHandle,
    'GetRawStackTrace'));
  DebugLibrary_GetFrameBasedStackTrace := TFastMM_GetStackTrace(FMMC_GetProcAddress(DebugSupportLibraryHandle,
    'GetFrameBasedStackTrace'));
  DebugLibrary_LogStackTrace_Legacy := TFastMM_LegacyConvertStackTraceToText(
    FMMC_GetProcAddress(DebugSupportLibraryHandle, 'LogStackTrace'));
  if (CodeOf(FastMM_GetStackTrace) = Pointer(@FastMM_NoOpGetStackTrace)) and Assigned(DebugLibrary_GetRawStackTrace) then
    FastMM_GetStackTrace := DebugLibrary_GetRawStackTrace;
  if (CodeOf(FastMM_ConvertStackTraceToText) = Pointer(@FastMM_NoOpConvertStackTraceToText)) and
    Assigned(DebugLibrary_LogStackTrace_Legacy) then
    FastMM_ConvertStackTraceToText := @LegacyLogStackTraceWrapper;
  Result := True;
end;

function FastMM_FreeDebugSupportLibrary: Boolean;
begin
  Result := False;
  if DebugSupportLibraryHandle = 0 then
    Exit;
  if Assigned(FastMM_GetStackTrace) and ((CodeOf(FastMM_GetStackTrace) = CodeOf(DebugLibrary_GetRawStackTrace)) or
    (CodeOf(FastMM_GetStackTrace) = CodeOf(DebugLibrary_GetFrameBasedStackTrace))) then
    FastMM_GetStackTrace := @FastMM_NoOpGetStackTrace;
  if CodeOf(FastMM_ConvertStackTraceToText) = Pointer(@LegacyLogStackTraceWrapper) then
    FastMM_ConvertStackTraceToText := @FastMM_NoOpConvertStackTraceToText;
  FMMC_FreeLibrary(DebugSupportLibraryHandle);
  DebugSupportLibraryHandle := 0;
  DebugLibrary_GetRawStackTrace := nil;
  DebugLibrary_GetFrameBasedStackTrace := nil;
  DebugLibrary_LogStackTrace_Legacy := nil;
  DebugSupportConfigured := False;
  Result := True;
end;

{------------------------Tuning------------------------}

var
  OptimizationStrategy: TFastMM_MemoryManagerOptimizationStrategy = mmosBalanced;
  AlignmentRequests: array[TFastMM_MinimumAddressAlignment] of Integer;

procedure FastMM_SetOptimizationStrategy(AStrategy: TFastMM_MemoryManagerOptimizationStrategy);
begin
  OptimizationStrategy := AStrategy;
  {The values of fastmm_set_optimization_strategy are the enumeration's.}
  if (Dll.Handle <> 0) and Assigned(Dll.SetOptimizationStrategy) then
    Dll.SetOptimizationStrategy(Ord(AStrategy));
end;

function FastMM_GetCurrentOptimizationStrategy: TFastMM_MemoryManagerOptimizationStrategy;
begin
  Result := OptimizationStrategy;
end;

{The coarsest outstanding request to the DLL, in bytes (16 when none asks for more); ModeLock held.}
procedure PassAlignmentToDll;
var
  Bytes: NativeUInt;
begin
  if AlignmentRequests[maa64Bytes] > 0 then
    Bytes := 64
  else if AlignmentRequests[maa32Bytes] > 0 then
    Bytes := 32
  else
    Bytes := 16;
  if (Dll.Handle <> 0) and Assigned(Dll.SetMinimumAlignment) then
    Dll.SetMinimumAlignment(Bytes);
end;

procedure FastMM_EnterMinimumAddressAlignment(AMinimumAddressAlignment: TFastMM_MinimumAddressAlignment);
begin
  FMMC_EnterCriticalSection(ModeLock);
  Inc(AlignmentRequests[AMinimumAddressAlignment]);
  PassAlignmentToDll;
  FMMC_LeaveCriticalSection(ModeLock);
end;

procedure FastMM_ExitMinimumAddressAlignment(AMinimumAddressAlignment: TFastMM_MinimumAddressAlignment);
begin
  FMMC_EnterCriticalSection(ModeLock);
  Dec(AlignmentRequests[AMinimumAddressAlignment]);
  PassAlignmentToDll;
  FMMC_LeaveCriticalSection(ModeLock);
end;

function FastMM_GetCurrentMinimumAddressAlignment: TFastMM_MinimumAddressAlignment;
var
  Bytes: NativeUInt;
begin
  {Every block of the DLL is 16-byte aligned, on Win32 too: never below maa16Bytes.}
  Bytes := 16;
  if (Dll.Handle <> 0) and Assigned(Dll.GetMinimumAlignment) then
    Bytes := Dll.GetMinimumAlignment();
  if Bytes >= 64 then
    Result := maa64Bytes
  else if Bytes >= 32 then
    Result := maa32Bytes
  else
    Result := maa16Bytes;
end;

{------------------------Event log------------------------}

{The DLL writes to the same file what it reports itself (in a process whose owner module has not
taken its events): it takes the name in the ANSI code page; AReset: back to its default, which is
this unit's default too.}
procedure TellDllEventLogFilename(AReset: Boolean);
var
  Ansi: array[0..2 * CMaxPath] of AnsiChar;
  N: Integer;
begin
  if (Dll.Handle = 0) or not Assigned(Dll.SetEventLogFilename) then
    Exit;
  N := 0;
  if not AReset then
    N := FMMC_WideCharToMultiByte(0 {CP_ACP}, 0, @EventLogFilename[0], -1, @Ansi[0], High(Ansi), nil, nil);
  if N <= 0 then
    Ansi[0] := #0;
  Dll.SetEventLogFilename(@Ansi[0]);
end;

procedure FastMM_SetDefaultEventLogFilename;
var
  Base: array[0..CMaxPath] of WideChar;
  EnvPath: array[0..CMaxPath] of WideChar;
  N, BaseLen, Start, EnvLen: Integer;
  Env: array[0..31] of WideChar;
begin
  BaseLen := ApplicationBaseName(Base);
  N := 0;
  WideAppendAscii(Env, N, 'FastMMLogFilePath');
  EnvLen := FMMC_GetEnvironmentVariableW(@Env[0], @EnvPath[0], CMaxPath);
  N := 0;
  if (EnvLen > 0) and (EnvLen < CMaxPath) then
  begin
    {The folder from FastMMLogFilePath, the application's name without its folder.}
    WideAppend(EventLogFilename, N, @EnvPath[0]);
    if (N > 0) and (EventLogFilename[N - 1] <> '\') and (EventLogFilename[N - 1] <> '/') then
      WideAppendAscii(EventLogFilename, N, '\');
    Start := BaseLen;
    while (Start > 0) and (Base[Start - 1] <> '\') and (Base[Start - 1] <> '/') do
      Dec(Start);
    WideAppend(EventLogFilename, N, @Base[Start]);
  end
  else
    WideAppend(EventLogFilename, N, @Base[0]);
  WideAppendAscii(EventLogFilename, N, '_MemoryManager_EventLog.txt');
  TellDllEventLogFilename(EnvLen = 0);
end;

procedure FastMM_SetEventLogFilename(APEventLogFilename: PWideChar);
var
  N: Integer;
begin
  if APEventLogFilename = nil then
  begin
    FastMM_SetDefaultEventLogFilename;
    Exit;
  end;
  N := 0;
  WideAppend(EventLogFilename, N, APEventLogFilename);
  TellDllEventLogFilename(False);
end;

function FastMM_GetEventLogFilename: PWideChar;
begin
  Result := @EventLogFilename[0];
end;

function FastMM_DeleteEventLogFile: Boolean;
begin
  Result := FMMC_DeleteFileW(@EventLogFilename[0]);
end;

{------------------------Sharing------------------------}

function FastMM_AttemptToUseSharedMemoryManager: Boolean;
begin
  Result := FastMMC_Installed;
end;

function FastMM_ShareMemoryManager: Boolean;
begin
  Result := FastMMC_Installed;
end;

{The first module of the process to install fastmm-c creates a named mapping; the others find
it there.}
procedure ClaimOwnership;
const
  CHexDigits: array[0..15] of AnsiChar = '0123456789ABCDEF';
var
  Name: array[0..63] of WideChar;
  N: Integer;
  Pid: Cardinal;
  Hex: ShortString;
  I: Integer;
begin
  Pid := FMMC_GetCurrentProcessId;
  Hex := '';
  for I := 7 downto 0 do
    Hex := Hex + CHexDigits[(Pid shr (I * 4)) and 15];
  N := 0;
  WideAppendAscii(Name, N, 'Local\FastMMC_PID_' + Hex);
  OwnerMapping := FMMC_CreateFileMappingW(CInvalidHandle, nil, CPageReadWrite, 0, 64, @Name[0]);
  IsOwner := (OwnerMapping <> 0) and (FMMC_GetLastError <> CErrorAlreadyExists);
  if (OwnerMapping <> 0) and not IsOwner then
  begin
    FMMC_CloseHandle(OwnerMapping);
    OwnerMapping := 0;
  end;
end;

{------------------------Leak report------------------------}

{FastMM5's leak check: a walk of the blocks in use at exit. A block registered as an expected leak
(by pointer; by class: the block holds an object of the class; by size: the block holds at least
that many bytes, the closest registered size first) takes one off its registration and is left
out. Each other block is reported (mmetUnexpectedMemoryLeakDetail: its size, class and first
bytes), and all of them in a summary by size and content (mmetUnexpectedMemoryLeakSummary).}

const
  CMaxLeakSummaryEntries = 1024;
  CMemoryDumpMaxBytes = 256;
  CMemoryDumpBytesPerLine = 32;
  CHexDigits: array[0..15] of AnsiChar = '0123456789ABCDEF';

type
  TLeakSummaryEntry = record
    UsableSize: NativeUInt;
    ContentType: NativeUInt;
    Count: NativeUInt;
  end;
  PLeakCheck = ^TLeakCheck;
  TLeakCheck = record
    {Copies of the registrations: each expected block takes one off.}
    Pointers: array[0..CMaxLeakPointers - 1] of Pointer;
    PointerCounts: array[0..CMaxLeakPointers - 1] of Integer;
    PointerCount: Integer;
    Entries: array[0..CMaxLeakEntries - 1] of TLeakEntry;
    EntryCount: Integer;
    Summary: array[0..CMaxLeakSummaryEntries - 1] of TLeakSummaryEntry;
    SummaryCount: Integer;
    Leaks: NativeUInt;
    LogDetail: Boolean;
    Cache: TReadableCache;
  end;

function TakeExpectedLeak(ACheck: PLeakCheck; ABlock: Pointer; AUsable, AFirstPointer: NativeUInt): Boolean;
var
  I, Best: Integer;
begin
  Result := True;
  for I := 0 to ACheck^.PointerCount - 1 do
    if (ACheck^.Pointers[I] = ABlock) and (ACheck^.PointerCounts[I] > 0) then
    begin
      Dec(ACheck^.PointerCounts[I]);
      Exit;
    end;
  if AFirstPointer <> 0 then
    for I := 0 to ACheck^.EntryCount - 1 do
      if (ACheck^.Entries[I].LeakedClass <> nil) and (ACheck^.Entries[I].Count > 0) and
        (NativeUInt(ACheck^.Entries[I].LeakedClass) = AFirstPointer) and
        (NativeUInt(ACheck^.Entries[I].LeakedClass.InstanceSize) <= AUsable) then
      begin
        Dec(ACheck^.Entries[I].Count);
        Exit;
      end;
  Best := -1;
  for I := 0 to ACheck^.EntryCount - 1 do
    if (ACheck^.Entries[I].LeakedClass = nil) and (ACheck^.Entries[I].Count > 0) and
      (NativeUInt(ACheck^.Entries[I].LeakSize) <= AUsable) and
      ((Best < 0) or (ACheck^.Entries[I].LeakSize > ACheck^.Entries[Best].LeakSize)) then
      Best := I;
  if Best >= 0 then
  begin
    Dec(ACheck^.Entries[Best].Count);
    Exit;
  end;
  Result := False;
end;

function HexAddress(P: Pointer): ShortString;
var
  V: NativeUInt;
  I: Integer;
begin
  V := NativeUInt(P);
  Result := '';
  for I := SizeOf(Pointer) * 2 - 1 downto 0 do
    Result := Result + CHexDigits[(V shr (I * 4)) and 15];
end;

{FastMM5's detail of one leaked block: tokens 3 (size), 8 (class), 10 (bytes dumped), 11 (address),
12 and 13 (the first bytes in hex and as text).}
procedure LogLeakDetail(const AInfo: TDll_BlockInfo; AContentType: NativeUInt; var ACache: TReadableCache);
var
  T, Dump: TFMMC_Text;
  Tokens: TFMMC_Tokens;
  DumpSize, I: NativeUInt;
  B: Byte;
begin
  TokensClear(Tokens);
  TokensSetGeneral(Tokens);
  TokenSetShort(Tokens, CTokenBlockSize, UIntToStr(AInfo.UsableSize));
  TokenSetShort(Tokens, CTokenObjectClass, ContentName(AContentType)^);
  TokenSetShort(Tokens, CTokenBlockAddress, HexAddress(AInfo.BlockAddress));
  DumpSize := AInfo.UsableSize;
  if DumpSize > CMemoryDumpMaxBytes then
    DumpSize := CMemoryDumpMaxBytes;
  if not IsReadable(ACache, AInfo.BlockAddress, DumpSize) then
    DumpSize := 0;
  TokenSetShort(Tokens, CTokenMemoryDumpSize, UIntToStr(DumpSize));
  TextClear(Dump);
  for I := 0 to NativeInt(DumpSize) - 1 do
  begin
    if I > 0 then
      if I mod CMemoryDumpBytesPerLine = 0 then
        TextAdd(Dump, #13#10)
      else
        TextAdd(Dump, ' ');
    B := PByte(AInfo.BlockAddress)[I];
    TextAdd(Dump, CHexDigits[B shr 4] + CHexDigits[B and 15]);
  end;
  TokenSet(Tokens, CTokenHexDump, Dump);
  TextClear(Dump);
  for I := 0 to NativeInt(DumpSize) - 1 do
  begin
    if (I > 0) and (I mod CMemoryDumpBytesPerLine = 0) then
      TextAdd(Dump, #13#10);
    B := PByte(AInfo.BlockAddress)[I];
    if (B >= 32) and (B < 127) then
      TextAdd(Dump, AnsiChar(B))
    else
      TextAdd(Dump, '.');
  end;
  TokenSet(Tokens, CTokenASCIIDump, Dump);
  TextClear(T);
  if AInfo.DebugHeader <> nil then
    TextAddTemplate(T, FastMM_MemoryLeakDetailMessage_DebugBlock, Tokens)
  else
    TextAddTemplate(T, FastMM_MemoryLeakDetailMessage_NormalBlock, Tokens);
  LogEvent(mmetUnexpectedMemoryLeakDetail, FastMM_MemoryLeakMessageBoxCaption, T);
end;

procedure LeakCheckCallback(AInfo: PDll_BlockInfo; AUserData: Pointer); cdecl;
var
  Check: PLeakCheck;
  First, Content: NativeUInt;
  I: Integer;
begin
  Check := AUserData;
  First := 0;
  if (AInfo^.UsableSize >= SizeOf(Pointer)) and IsReadable(Check^.Cache, AInfo^.BlockAddress, SizeOf(Pointer)) then
    First := PNativeUInt(AInfo^.BlockAddress)^;
  if TakeExpectedLeak(Check, AInfo^.BlockAddress, AInfo^.UsableSize, First) then
    Exit;
  Inc(Check^.Leaks);
  Content := BlockContentType(Check^.Cache, AInfo^.BlockAddress, AInfo^.UsableSize);
  {A debug block's detail came from the DLL already, with its traces and number.}
  if Check^.LogDetail and not ((AInfo^.DebugHeader <> nil) and DebugLeakDetailsWritten) then
    LogLeakDetail(AInfo^, Content, Check^.Cache);
  for I := 0 to Check^.SummaryCount - 1 do
    if (Check^.Summary[I].UsableSize = AInfo^.UsableSize) and (Check^.Summary[I].ContentType = Content) then
    begin
      Inc(Check^.Summary[I].Count);
      Exit;
    end;
  if Check^.SummaryCount < CMaxLeakSummaryEntries then
  begin
    Check^.Summary[Check^.SummaryCount].UsableSize := AInfo^.UsableSize;
    Check^.Summary[Check^.SummaryCount].ContentType := Content;
    Check^.Summary[Check^.SummaryCount].Count := 1;
    Inc(Check^.SummaryCount);
  end;
end;

{FastMM5's summary (token 14): a line per size, ascending, "size: n x class, n x class".}
procedure LogLeakSummary(ACheck: PLeakCheck);
var
  Entries, T: TFMMC_Text;
  Tokens: TFMMC_Tokens;
  I, J: Integer;
  E: TLeakSummaryEntry;
  Size: NativeUInt;
begin
  for I := 1 to ACheck^.SummaryCount - 1 do
  begin
    E := ACheck^.Summary[I];
    J := I;
    while (J > 0) and ((ACheck^.Summary[J - 1].UsableSize > E.UsableSize) or
      ((ACheck^.Summary[J - 1].UsableSize = E.UsableSize) and (ACheck^.Summary[J - 1].ContentType < E.ContentType))) do
    begin
      ACheck^.Summary[J] := ACheck^.Summary[J - 1];
      Dec(J);
    end;
    ACheck^.Summary[J] := E;
  end;
  TextClear(Entries);
  Size := High(NativeUInt);
  for I := 0 to ACheck^.SummaryCount - 1 do
  begin
    if ACheck^.Summary[I].UsableSize <> Size then
    begin
      Size := ACheck^.Summary[I].UsableSize;
      TextAdd(Entries, #13#10);
      TextAddUInt(Entries, Size);
      TextAdd(Entries, ': ');
    end
    else
      TextAdd(Entries, ', ');
    TextAddUInt(Entries, ACheck^.Summary[I].Count);
    TextAdd(Entries, ' x ');
    TextAdd(Entries, ContentName(ACheck^.Summary[I].ContentType)^);
  end;
  TokensClear(Tokens);
  TokensSetGeneral(Tokens);
  TokenSet(Tokens, CTokenLeakSummaryEntries, Entries);
  TextClear(T);
  {FastMM5's choice of template.}
  if mmetUnexpectedMemoryLeakDetail in FastMM_LogToFileEvents then
    TextAddTemplate(T, FastMM_MemoryLeakSummaryMessage_LeakDetailLoggedToEventLog, Tokens)
  else
    TextAddTemplate(T, FastMM_MemoryLeakSummaryMessage_LeakDetailNotLogged, Tokens);
  LogEvent(mmetUnexpectedMemoryLeakSummary, FastMM_MemoryLeakMessageBoxCaption, T);
end;

{With the DLL's walk; False when the DLL has none (or no working memory could be had).}
function PerformLeakCheckByWalk: Boolean;
var
  Check: PLeakCheck;
  Events: TFastMM_MemoryManagerEventTypeSet;
begin
  Result := False;
  if not DllHasWalk then
    Exit;
  Check := AllocateWorkingMemory(SizeOf(TLeakCheck));
  if Check = nil then
    Exit;
  FMMC_EnterCriticalSection(LeakLock);
  Check^.PointerCount := LeakPointerCount;
  Check^.EntryCount := LeakEntryCount;
  if LeakPointerCount > 0 then
  begin
    Move(LeakPointers[0], Check^.Pointers[0], LeakPointerCount * SizeOf(Pointer));
    Move(LeakPointerCounts[0], Check^.PointerCounts[0], LeakPointerCount * SizeOf(Integer));
  end;
  if LeakEntryCount > 0 then
    Move(LeakEntries[0], Check^.Entries[0], LeakEntryCount * SizeOf(TLeakEntry));
  FMMC_LeaveCriticalSection(LeakLock);
  Events := FastMM_OutputDebugStringEvents + FastMM_LogToFileEvents + FastMM_MessageBoxEvents;
  Check^.LogDetail := mmetUnexpectedMemoryLeakDetail in Events;
  DllWalk(@LeakCheckCallback, Check, CUsedBlockTypes, True, 1000, 0, $ffffffff);
  if (Check^.Leaks > 0) and (mmetUnexpectedMemoryLeakSummary in Events) then
    LogLeakSummary(Check);
  FreeWorkingMemory(Check);
  Result := True;
end;

procedure PerformLeakCheck;
var
  S: TFastMMC_State;
  T, Entries: TFMMC_Text;
  Tokens: TFMMC_Tokens;
  Blocks, Bytes, ExpectedBlocks, ExpectedBytes, Size: NativeUInt;
  I: Integer;
begin
  {Cached free blocks of this thread are free: make the counts exact.}
  FastMMC_FlushThreadCache;
  if PerformLeakCheckByWalk then
    Exit;
  {An older DLL, without the walk: the counts, less the registrations.}
  if not FastMMC_GetState(S) then
    Exit;
  Blocks := S.Small.BlocksInUse + S.Medium.BlocksInUse + S.Large.BlocksInUse;
  Bytes := AllocatedBytes(S);
  ExpectedBlocks := 0;
  ExpectedBytes := 0;
  FMMC_EnterCriticalSection(LeakLock);
  for I := 0 to LeakPointerCount - 1 do
  begin
    Size := Dll.UsableSize(LeakPointers[I]);
    if Size <> 0 then {still alive}
    begin
      Inc(ExpectedBlocks);
      Inc(ExpectedBytes, Size);
    end;
  end;
  for I := 0 to LeakEntryCount - 1 do
  begin
    Inc(ExpectedBlocks, LeakEntries[I].Count);
    if LeakEntries[I].LeakedClass <> nil then
      Size := LeakEntries[I].LeakedClass.InstanceSize
    else
      Size := LeakEntries[I].LeakSize;
    Inc(ExpectedBytes, Size * NativeUInt(LeakEntries[I].Count));
  end;
  FMMC_LeaveCriticalSection(LeakLock);
  if Blocks <= ExpectedBlocks then
    Exit;
  {Token 14: the counts.}
  TextClear(Entries);
  TextAddUInt(Entries, Blocks - ExpectedBlocks);
  TextAdd(Entries, ' unexpected block(s), ');
  TextAddUInt(Entries, Minus(Bytes, ExpectedBytes));
  TextAddLine(Entries, ' bytes.');
  TextAdd(Entries, 'In use: ');
  TextAddUInt(Entries, S.Small.BlocksInUse);
  TextAdd(Entries, ' small, ');
  TextAddUInt(Entries, S.Medium.BlocksInUse);
  TextAdd(Entries, ' medium, ');
  TextAddUInt(Entries, S.Large.BlocksInUse);
  TextAdd(Entries, ' large block(s); ');
  TextAddUInt(Entries, ExpectedBlocks);
  TextAdd(Entries, ' registered expected leak(s) (');
  TextAddUInt(Entries, ExpectedBytes);
  TextAddLine(Entries, ' bytes) are not counted.');
  TextAdd(Entries, '(fastmm-c reports a summary; the debug mode lists each block.)');
  TokensClear(Tokens);
  TokensSetGeneral(Tokens);
  TokenSet(Tokens, CTokenLeakSummaryEntries, Entries);
  TextClear(T);
  {FastMM5's choice of template.}
  if mmetUnexpectedMemoryLeakDetail in FastMM_LogToFileEvents then
    TextAddTemplate(T, FastMM_MemoryLeakSummaryMessage_LeakDetailLoggedToEventLog, Tokens)
  else
    TextAddTemplate(T, FastMM_MemoryLeakSummaryMessage_LeakDetailNotLogged, Tokens);
  LogEvent(mmetUnexpectedMemoryLeakSummary, FastMM_MemoryLeakMessageBoxCaption, T);
end;

{------------------------The DLL's debug events------------------------}

{The owner module's unit takes the DLL's debug events (fastmm_set_event_handler) and writes each
as FastMM5 does: its template filled with the block's tokens, routed by FastMM_LogToFileEvents,
FastMM_OutputDebugStringEvents and FastMM_MessageBoxEvents. The DLL calls the handler on the
thread that found the error, possibly inside FreeMem, with none of its locks held; the handler
builds its text on the stack and allocates nothing. When it returns the DLL fails the operation
and the unit raises where FastMM5 raises (EInvalidPointer).}

const
  {include/fastmm.h, fastmm_event_kind.}
  CDllEventHeaderCorrupted = 1;
  CDllEventGuardCorrupted = 2;
  CDllEventWriteAfterFree = 3;
  CDllEventDoubleFree = 4;
  CDllEventReallocOfFreed = 5;
  CDllEventLeak = 7;
  CDllEventFreedObjectCall = 8;
  {FastMM5's tokens for a debug block's details (3, 8 and 10-13 are declared with the others).}
  CTokenAllocatedByThread = 4;
  CTokenFreedByThread = 5;
  CTokenAllocationStackTrace = 6;
  CTokenFreeStackTrace = 7;
  CTokenAllocationNumber = 9;
  CTokenModifyAfterFreeDetail = 15;
  CTokenVirtualMethodName = 17;
  CTokenVirtualMethodCallStackTrace = 24;
  CTokenAllocationDate = 25;
  CTokenAllocationTime = 26;

procedure TextAddHex(var T: TFMMC_Text; V: NativeUInt; ADigits: Integer);
var
  Digits: array[0..2 * SizeOf(NativeUInt) - 1] of AnsiChar;
  N: Integer;
begin
  N := 0;
  repeat
    Digits[N] := CHexDigits[V and 15];
    V := V shr 4;
    Inc(N);
  until ((V = 0) and (N >= ADigits)) or (N = Length(Digits));
  while N > 0 do
  begin
    Dec(N);
    TextAdd(T, Digits[N]);
  end;
end;

{"module+$offset ($address)", or the bare address when no module holds it.}
procedure TextAddCodeAddress(var T: TFMMC_Text; AAddress: Pointer);
const
  CFromAddress = 4;
  CUnchangedRefCount = 2;
var
  Module: NativeUInt;
  Name: array[0..CMaxPath] of WideChar;
  N, Start: Integer;
begin
  Module := 0;
  if FMMC_GetModuleHandleExW(CFromAddress or CUnchangedRefCount, AAddress, Module) and (Module <> 0) then
  begin
    N := FMMC_GetModuleFileNameW(Module, @Name[0], CMaxPath);
    if (N > 0) and (N < CMaxPath) then
    begin
      Name[N] := #0;
      Start := N;
      while (Start > 0) and (Name[Start - 1] <> '\') and (Name[Start - 1] <> '/') do
        Dec(Start);
      TextAddWide(T, @Name[Start]);
      TextAdd(T, '+$');
      TextAddHex(T, NativeUInt(AAddress) - Module, 1);
      TextAdd(T, ' ($');
      TextAddHex(T, NativeUInt(AAddress), 2 * SizeOf(Pointer));
      TextAdd(T, ')');
      Exit;
    end;
  end;
  TextAdd(T, '$');
  TextAddHex(T, NativeUInt(AAddress), 2 * SizeOf(Pointer));
end;

{A stack trace's text, FastMM5's way: through FastMM_ConvertStackTraceToText when the program or
the support library set one, else one "module+offset" line per entry.}
procedure TokenSetStackTrace(var ATokens: TFMMC_Tokens; AID: Integer; const AFrames: array of Pointer;
  ACount: NativeUInt);
var
  T: TFMMC_Text;
  Entries: array[0..63] of NativeUInt;
  Wide: array[0..4095] of WideChar;
  WideEnd: PWideChar;
  I: NativeUInt;
begin
  TextClear(T);
  if ACount > 64 then
    ACount := 64;
  if ACount > 0 then
  begin
    if Assigned(FastMM_ConvertStackTraceToText) and
      (CodeOf(FastMM_ConvertStackTraceToText) <> Pointer(@FastMM_NoOpConvertStackTraceToText)) then
    begin
      FillChar(Entries, SizeOf(Entries), 0);
      for I := 0 to ACount - 1 do
        Entries[I] := NativeUInt(AFrames[I]);
      WideEnd := FastMM_ConvertStackTraceToText(@Entries[0], ACount, @Wide[0], @Wide[High(Wide)]);
      if (NativeUInt(WideEnd) > NativeUInt(@Wide[0])) and (NativeUInt(WideEnd) <= NativeUInt(@Wide[High(Wide)])) then
        TextAddWideCount(T, @Wide[0], (NativeUInt(WideEnd) - NativeUInt(@Wide[0])) div SizeOf(WideChar));
    end
    else
      for I := 0 to ACount - 1 do
      begin
        TextAdd(T, #13#10'  ');
        TextAddCodeAddress(T, AFrames[I]);
      end;
  end;
  TokenSet(ATokens, AID, T);
end;

{FastMM5's name for the class of a block, its string type, or Unknown.}
procedure TokenSetContent(var ATokens: TFMMC_Tokens; AFirstPointerAt: Pointer; AData: Pointer; ASize: NativeUInt);
var
  C: TClass;
  Cache: TReadableCache;
begin
  C := nil;
  if AFirstPointerAt <> nil then
    C := FastMM_DetectClassInstance(AFirstPointerAt);
  if C <> nil then
    TokenSetShort(ATokens, CTokenObjectClass, PShortString(PPointer(PByte(C) + vmtClassName)^)^)
  else
  begin
    Cache.RegionStart := 0;
    Cache.RegionEnd := 0;
    if (AData <> nil) and (ASize > 0) and IsReadable(Cache, AData, ASize) then
      case FastMM_DetectStringData(AData, ASize) of
        sdtAnsiString:
          TokenSetShort(ATokens, CTokenObjectClass, 'AnsiString');
        sdtUnicodeString:
          TokenSetShort(ATokens, CTokenObjectClass, 'UnicodeString');
      else
        TokenSetShort(ATokens, CTokenObjectClass, 'Unknown');
      end
    else
      TokenSetShort(ATokens, CTokenObjectClass, 'Unknown');
  end;
end;

{Tokens 10-13: up to CMemoryDumpMaxBytes of the block, as far as it can be read.}
procedure TokensSetDump(var ATokens: TFMMC_Tokens; ABlock: Pointer; ASize: NativeUInt);
var
  Cache: TReadableCache;
  Hex, Ascii: TFMMC_Text;
  B: PByte;
  I: NativeUInt;
begin
  if ASize > CMemoryDumpMaxBytes then
    ASize := CMemoryDumpMaxBytes;
  Cache.RegionStart := 0;
  Cache.RegionEnd := 0;
  if (ABlock = nil) or not IsReadable(Cache, ABlock, ASize) then
    ASize := 0;
  TokenSetShort(ATokens, CTokenMemoryDumpSize, UIntToStr(ASize));
  TextClear(Hex);
  TextAddHex(Hex, NativeUInt(ABlock), 2 * SizeOf(Pointer));
  TokenSet(ATokens, CTokenBlockAddress, Hex);
  TextClear(Hex);
  TextClear(Ascii);
  B := ABlock;
  for I := 0 to NativeInt(ASize) - 1 do
  begin
    if (I > 0) and (I mod 32 = 0) then
    begin
      TextAdd(Hex, #13#10);
      TextAdd(Ascii, #13#10);
    end
    else if I > 0 then
      TextAdd(Hex, ' ');
    TextAddHex(Hex, B[I], 2);
    if (B[I] >= 32) and (B[I] < 127) then
      TextAdd(Ascii, AnsiChar(B[I]))
    else
      TextAdd(Ascii, '.');
  end;
  TokenSet(ATokens, CTokenHexDump, Hex);
  TokenSet(ATokens, CTokenASCIIDump, Ascii);
end;

{Tokens 25 and 26: when the block was allocated, from its tick count (FastMM5: now less the
milliseconds since).}
procedure TokensSetAllocationTime(var ATokens: TFMMC_Tokens; ATickCount: Cardinal);
var
  Now: TFMMC_SystemTime;
  FileTime: Int64;
begin
  FMMC_GetLocalTime(Now);
  if not FMMC_SystemTimeToFileTime(@Now, @FileTime) then
    Exit;
  Dec(FileTime, Int64(Cardinal(FMMC_GetTickCount - ATickCount)) * 10000);
  if not FMMC_FileTimeToSystemTime(@FileTime, @Now) then
    Exit;
  TokenSetShort(ATokens, CTokenAllocationDate, UIntToStr(Now.Year) + '-' + TwoDigits(Now.Month) + '-' +
    TwoDigits(Now.Day));
  TokenSetShort(ATokens, CTokenAllocationTime, TwoDigits(Now.Hour) + ':' + TwoDigits(Now.Minute) + ':' +
    TwoDigits(Now.Second));
end;

{Token 17: FastMM5 names TObject's virtual methods, and numbers the others (#n).}
function VirtualMethodName(AIndex: Integer): ShortString;
const
  CNames: array[0..10] of string[20] = ('Destroy', 'FreeInstance', 'NewInstance', 'DefaultHandler', 'Dispatch',
    'BeforeDestruction', 'AfterConstruction', 'SafeCallException', 'ToString', 'GetHashCode', 'Equals');
  COffsets: array[0..10] of Integer = (vmtDestroy, vmtFreeInstance, vmtNewInstance, vmtDefaultHandler, vmtDispatch,
    vmtBeforeDestruction, vmtAfterConstruction, vmtSafeCallException, vmtToString, vmtGetHashCode, vmtEquals);
var
  I: Integer;
begin
  for I := Low(COffsets) to High(COffsets) do
    if COffsets[I] = AIndex * SizeOf(Pointer) then
      Exit(CNames[I]);
  if AIndex >= 0 then
    Result := '#' + UIntToStr(AIndex)
  else
    Result := '#-' + UIntToStr(-AIndex);
end;

function LeakIsExpected(AEvent: PFMMC_DebugEvent): Boolean;
var
  C: TClass;
  I: Integer;
begin
  Result := False;
  C := nil;
  if AEvent^.UserSize >= SizeOf(Pointer) then
    C := FastMM_DetectClassInstance(AEvent^.Block);
  for I := 0 to ReportLeakEntryCount - 1 do
    if (ReportLeakEntries[I].Count > 0) and
      (((C <> nil) and (ReportLeakEntries[I].LeakedClass = C)) or
      ((ReportLeakEntries[I].LeakedClass = nil) and (NativeInt(AEvent^.UserSize) = ReportLeakEntries[I].LeakSize))) then
    begin
      Dec(ReportLeakEntries[I].Count);
      Exit(True);
    end;
end;

procedure DllEventHandler(AEvent: PFMMC_DebugEvent); cdecl;
var
  Tokens: TFMMC_Tokens;
  T: TFMMC_Text;
  H: PFastMM_DebugBlockHeader;
  Freed: Boolean;
  Kind: TFastMM_MemoryManagerEventType;
  Template, Caption: PWideChar;
  I: NativeUInt;
begin
  H := AEvent^.DebugHeader;
  Freed := (H <> nil) and (H^.DebugBlockFlags = 33);
  Caption := FastMM_MemoryCorruptionMessageBoxCaption;
  case AEvent^.Kind of
    CDllEventHeaderCorrupted:
      begin
        Kind := mmetDebugBlockHeaderCorruption;
        Template := FastMM_BlockHeaderCorruptedMessage;
      end;
    CDllEventGuardCorrupted:
      begin
        Kind := mmetDebugBlockFooterCorruption;
        if Freed then
          Template := FastMM_BlockFooterCorruptedMessage_FreedBlock
        else
          Template := FastMM_BlockFooterCorruptedMessage_AllocatedBlock;
      end;
    CDllEventWriteAfterFree:
      begin
        Kind := mmetDebugBlockModifiedAfterFree;
        Template := FastMM_BlockModifiedAfterFreeMessage;
      end;
    CDllEventDoubleFree:
      begin
        Kind := mmetDebugBlockDoubleFree;
        Template := FastMM_DebugBlockDoubleFree;
      end;
    CDllEventReallocOfFreed:
      begin
        Kind := mmetDebugBlockReallocOfFreedBlock;
        Template := FastMM_DebugBlockReallocOfFreedBlock;
      end;
    CDllEventLeak:
      begin
        if LeakIsExpected(AEvent) then
          Exit;
        Kind := mmetUnexpectedMemoryLeakDetail;
        if H <> nil then
          Template := FastMM_MemoryLeakDetailMessage_DebugBlock
        else
          Template := FastMM_MemoryLeakDetailMessage_NormalBlock;
        Caption := FastMM_MemoryLeakMessageBoxCaption;
      end;
    CDllEventFreedObjectCall:
      begin
        Kind := mmetVirtualMethodCallOnFreedObject;
        Template := FastMM_VirtualMethodCallOnFreedObjectMessage;
        Caption := FastMM_VirtualMethodCallOnFreedObjectMessageBoxCaption;
      end;
  else
    Exit; {no FastMM5 event type: counted by the DLL, not written}
  end;
  if not (Kind in FastMM_LogToFileEvents + FastMM_OutputDebugStringEvents + FastMM_MessageBoxEvents) then
    Exit;
  TokensClear(Tokens);
  TokensSetGeneral(Tokens);
  TokenSetShort(Tokens, CTokenBlockSize, UIntToStr(AEvent^.UserSize));
  if H <> nil then
  begin
    TokenSetShort(Tokens, CTokenAllocatedByThread, UIntToStr(H^.AllocatedByThread));
    TokenSetShort(Tokens, CTokenAllocationNumber, UIntToStr(H^.AllocationNumber));
    TokenSetStackTrace(Tokens, CTokenAllocationStackTrace, AEvent^.AllocFrames, AEvent^.AllocFrameCount);
    TokensSetAllocationTime(Tokens, H^.AllocationTickCount);
    if Freed then
    begin
      TokenSetShort(Tokens, CTokenFreedByThread, UIntToStr(H^.FreedByThread));
      TokenSetStackTrace(Tokens, CTokenFreeStackTrace, AEvent^.FreeFrames, AEvent^.FreeFrameCount);
      TokenSetContent(Tokens, @H^.PreviouslyUsedByClass, nil, 0);
    end
    else if AEvent^.UserSize >= SizeOf(Pointer) then
      TokenSetContent(Tokens, AEvent^.Block, AEvent^.Block, AEvent^.UserSize)
    else
      TokenSetContent(Tokens, nil, AEvent^.Block, AEvent^.UserSize);
    TokensSetDump(Tokens, AEvent^.Block, AEvent^.UserSize);
  end
  else
    TokensSetDump(Tokens, AEvent^.Block, 64);
  if AEvent^.ModifiedRangeCount > 0 then
  begin
    TextClear(T);
    for I := 0 to AEvent^.ModifiedRangeCount - 1 do
    begin
      if I > 0 then
        TextAdd(T, ', ');
      TextAddUInt(T, AEvent^.ModifiedRanges[I].Offset);
      TextAdd(T, '(');
      TextAddUInt(T, AEvent^.ModifiedRanges[I].Length);
      TextAdd(T, ')');
    end;
    TokenSet(Tokens, CTokenModifyAfterFreeDetail, T);
  end;
  if AEvent^.Kind = CDllEventFreedObjectCall then
  begin
    TokenSetShort(Tokens, CTokenVirtualMethodName, VirtualMethodName(AEvent^.VirtualMethodIndex));
    TokenSetStackTrace(Tokens, CTokenVirtualMethodCallStackTrace, AEvent^.CallFrames, AEvent^.CallFrameCount);
  end;
  TextClear(T);
  TextAddTemplate(T, Template, Tokens);
  LogEvent(Kind, Caption, T);
end;

{After the DLL has reported a virtual call on a freed object: FastMM5 raises EInvalidPointer
(run-time error 204 without SysUtils).}
procedure DllFreedObjectHandler; cdecl;
begin
  HeapError(204);
end;

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
  if Assigned(Dll.BindVariables) then
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
    if Assigned(Dll.SetScanBeforeEveryOperation) then
      Dll.SetScanBeforeEveryOperation(0);
  end;
  if Assigned(Dll.SetEventHandler) then
  begin
    Dll.SetEventHandler(Pointer(@DllEventHandler));
    EventHandlerSet := True;
    {The unit reports leaks at its finalization, as FastMM5's routing says.}
    if Assigned(Dll.SetLeakReportAtExit) then
      Dll.SetLeakReportAtExit(0);
  end;
  if Assigned(Dll.SetFreedObjectHandler) then
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
  if Assigned(Dll.SetFreedObjectHandler) then
    Dll.SetFreedObjectHandler(nil);
end;

{The debug blocks still live, one mmetUnexpectedMemoryLeakDetail each (the DLL's report through
the handler), those registered as expected by pointer, class or size left out.}
procedure ReportDebugBlockLeakDetails;
begin
  if EventHandlerSet and Assigned(Dll.ReportLeaks) then
  begin
    PrepareLeakMatching;
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
  FastMM_SetDefaultEventLogFilename;
  if IsMemoryManagerSet then
  begin
    InstallationState := mmisOtherThirdPartyMemoryManagerInstalled;
    TokensClear(Tokens);
    TokensSetGeneral(Tokens);
    TextClear(T);
    TextAddTemplate(T, FastMM_AnotherMemoryManagerAlreadyInstalledMessage, Tokens);
    LogEvent(mmetAnotherThirdPartyMemoryManagerAlreadyInstalled, FastMM_CannotSwitchMemoryManagerMessageBoxCaption, T);
    Exit;
  end;
  if not LoadDll then
  begin
    TextClear(T);
    TextAdd(T, 'fastmm-c was not installed: ' + CFastMMC_DLLName + ' could not be loaded (Windows error ');
    TextAddUInt(T, DllLoadError);
    TextAdd(T, '); it belongs beside ');
    N := 0;
    if ModuleFolder(HInstance, Name) > 0 then
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
  FMMC_InitializeCriticalSection(LeakLock);
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
  {LeakLock stays: a late FastMM_*ExpectedMemoryLeak call must still find it.}

end.
