/* SPDX-License-Identifier: MIT */
/* fastmm_get_block_class, the one reader of Delphi's and Free Pascal's VMTs that the leak reports
 * and the Pascal unit use: a block holding an object of a fake Delphi class and of a fake Free
 * Pascal class is named with its VMT; names past 63 characters and with '$' (a specialized
 * generic's, a closure's frame) are names; an instance larger than the block, a VMT that does
 * not agree with itself, a bad name and memory nobody mapped are no class. */
#include "test_util.h"

#include <stdint.h>

#include "fastmm.h"

/* Delphi: vmtSelfPtr (-22), vmtClassName (-14), vmtInstanceSize (-13) pointers before the VMT.
 * Free Pascal: instance size, its negation, the parent, the name at the VMT's start. The reader
 * tries both layouts on every VMT, so each fake has 22 pointers before it and 4 from it. */
static void *delphi_area[26];
#define DELPHI_VMT (&delphi_area[22])
static void *fpc_area[26];
#define FPC_VMT (&fpc_area[22])

static void make_delphi(const unsigned char *name, size_t instance_size) {
  void **vmt = DELPHI_VMT;
  vmt[-22] = vmt;
  vmt[-14] = (void *)name;
  vmt[-13] = (void *)(uintptr_t)instance_size;
}

static void make_fpc(const unsigned char *name, intptr_t instance_size) {
  void **vmt = FPC_VMT;
  vmt[0] = (void *)instance_size;
  vmt[1] = (void *)-instance_size;
  vmt[2] = NULL;
  vmt[3] = (void *)name;
}

/* A ShortString: its length, then its characters. */
static unsigned char long_name[80];
static unsigned char closure_name[] = "\x1aTForm1.Button1Click$ActRec";

int main(void) {
  char name[256];
  void **object = (void **)fastmm_getmem(48);

  /* Delphi's layout. */
  make_delphi((const unsigned char *)"\x0bTLeakedItem", 32);
  object[0] = DELPHI_VMT;
  CHECK(fastmm_get_block_class(object, 48, name, sizeof name) == DELPHI_VMT);
  CHECK(strcmp(name, "TLeakedItem") == 0);
  CHECK(fastmm_get_block_class(object, 48, NULL, 0) == DELPHI_VMT); /* no name asked for */
  CHECK(fastmm_get_block_class(object, 48, name, 5) == DELPHI_VMT); /* the name cut to fit */
  CHECK(strcmp(name, "TLea") == 0);
  CHECK(fastmm_get_block_class(object, 16, name, sizeof name) == NULL); /* instance 32 > 16 */
  CHECK(name[0] == 0);
  CHECK(fastmm_get_block_class(object, SIZE_MAX, name, sizeof name) == DELPHI_VMT);
  /* A name longer than 63 characters, as specialized generics have. */
  const char *generic =
      "TDictionary<System.string,System.Generics.Collections.TList<System.Integer>>";
  long_name[0] = (unsigned char)strlen(generic);
  memcpy(long_name + 1, generic, long_name[0]);
  make_delphi(long_name, 32);
  CHECK(fastmm_get_block_class(object, 48, name, sizeof name) == DELPHI_VMT);
  CHECK(strcmp(name, generic) == 0);
  make_delphi(closure_name, 32);
  CHECK(fastmm_get_block_class(object, 48, name, sizeof name) == DELPHI_VMT);
  CHECK(strcmp(name, "TForm1.Button1Click$ActRec") == 0);
  make_delphi((const unsigned char *)"\x04TB d", 32); /* a space is no name's */
  CHECK(fastmm_get_block_class(object, 48, name, sizeof name) == NULL);
  make_delphi((const unsigned char *)"\x0bTLeakedItem", 32);
  DELPHI_VMT[-22] = NULL; /* the self pointer is wrong */
  CHECK(fastmm_get_block_class(object, 48, name, sizeof name) == NULL);

  /* Free Pascal's layout. */
  make_fpc((const unsigned char *)"\x0cTStringList2", 40);
  object[0] = FPC_VMT;
  CHECK(fastmm_get_block_class(object, 48, name, sizeof name) == FPC_VMT);
  CHECK(strcmp(name, "TStringList2") == 0);
  FPC_VMT[1] = (void *)(intptr_t)-39; /* no longer the negation */
  CHECK(fastmm_get_block_class(object, 48, name, sizeof name) == NULL);

  /* Not objects: zeros, a pointer to itself, memory nobody mapped, a short block, NULL. */
  object[0] = NULL;
  CHECK(fastmm_get_block_class(object, 48, name, sizeof name) == NULL);
  object[0] = &object[1];
  object[1] = NULL;
  CHECK(fastmm_get_block_class(object, 48, name, sizeof name) == NULL);
  object[0] = (void *)(uintptr_t)0x7FF0FFF0u;
  CHECK(fastmm_get_block_class(object, 48, name, sizeof name) == NULL);
  object[0] = DELPHI_VMT;
  CHECK(fastmm_get_block_class(object, sizeof(void *) - 1, name, sizeof name) == NULL);
  CHECK(fastmm_get_block_class(NULL, 48, name, sizeof name) == NULL);
  CHECK(fastmm_get_block_class((void *)(uintptr_t)0x10, 48, name, sizeof name) == NULL);
  CHECK_EQ(fastmm_freemem(object), 0);
  return tu_finish("test_block_class");
}
