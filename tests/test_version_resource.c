/* SPDX-License-Identifier: MIT */
/* test_version_resource VERSION DLL...: each DLL carries the version resource of
 * src/api/version.rc.in, read back as Windows' Details tab reads it (GetFileVersionInfoW and
 * VerQueryValueW): the fixed file and product versions are VERSION (MAJOR.MINOR.PATCH.0, from
 * CMake's project()), the strings FileVersion and ProductVersion are VERSION, ProductName is
 * fastmm-c, OriginalFilename is the DLL's own file name, LegalCopyright names the MIT licence,
 * and CompanyName and FileDescription are there. Windows builds only (under Wine here). */
#include "test_util.h"

#include <wchar.h>
#include <windows.h>

/* The string `name` of the resource's U.S. English / Unicode table, or NULL. */
static const wchar_t *version_string(void *info, const wchar_t *name) {
  wchar_t path[128] = L"\\StringFileInfo\\040904b0\\";
  if (wcslen(path) + wcslen(name) >= sizeof path / sizeof path[0]) {
    return NULL;
  }
  wcscat(path, name);
  wchar_t *value = NULL;
  UINT length = 0;
  if (!VerQueryValueW(info, path, (void **)&value, &length) || length == 0) {
    return NULL;
  }
  return value;
}

static int equals_ascii(const wchar_t *w, const char *a) {
  if (w == NULL) {
    return 0;
  }
  while (*a != '\0' && (unsigned)*w == (unsigned char)*a) {
    w++;
    a++;
  }
  return *a == '\0' && *w == L'\0';
}

static void check_dll(const char *dll, const char *version, unsigned major, unsigned minor,
                      unsigned patch) {
  wchar_t wpath[MAX_PATH];
  CHECK_MSG(MultiByteToWideChar(CP_ACP, 0, dll, -1, wpath, MAX_PATH) > 0, "%s: path", dll);
  DWORD ignored = 0;
  DWORD size = GetFileVersionInfoSizeW(wpath, &ignored);
  CHECK_MSG(size > 0, "%s: no version resource (error %lu)", dll, (unsigned long)GetLastError());
  if (size == 0) {
    return;
  }
  void *info = malloc(size);
  CHECK(info != NULL);
  if (info == NULL || !GetFileVersionInfoW(wpath, 0, size, info)) {
    CHECK_MSG(0, "%s: GetFileVersionInfoW failed", dll);
    free(info);
    return;
  }

  VS_FIXEDFILEINFO *fixed = NULL;
  UINT fixed_length = 0;
  CHECK_MSG(VerQueryValueW(info, L"\\", (void **)&fixed, &fixed_length) &&
                fixed_length >= sizeof *fixed,
            "%s: no fixed file info", dll);
  if (fixed != NULL && fixed_length >= sizeof *fixed) {
    CHECK_EQ(fixed->dwSignature, 0xFEEF04BDu);
    CHECK_MSG(fixed->dwFileVersionMS == ((major << 16) | minor) &&
                  fixed->dwFileVersionLS == (patch << 16),
              "%s: FILEVERSION %lu.%lu.%lu.%lu, expected %s.0", dll,
              (unsigned long)(fixed->dwFileVersionMS >> 16),
              (unsigned long)(fixed->dwFileVersionMS & 0xFFFF),
              (unsigned long)(fixed->dwFileVersionLS >> 16),
              (unsigned long)(fixed->dwFileVersionLS & 0xFFFF), version);
    CHECK_MSG(fixed->dwProductVersionMS == fixed->dwFileVersionMS &&
                  fixed->dwProductVersionLS == fixed->dwFileVersionLS,
              "%s: PRODUCTVERSION differs from FILEVERSION", dll);
    CHECK_MSG(fixed->dwFileType == VFT_DLL, "%s: FILETYPE is not VFT_DLL", dll);
  }

  CHECK_MSG(equals_ascii(version_string(info, L"FileVersion"), version),
            "%s: FileVersion is not %s", dll, version);
  CHECK_MSG(equals_ascii(version_string(info, L"ProductVersion"), version),
            "%s: ProductVersion is not %s", dll, version);
  CHECK_MSG(equals_ascii(version_string(info, L"ProductName"), "fastmm-c"),
            "%s: ProductName is not fastmm-c", dll);
  CHECK_MSG(equals_ascii(version_string(info, L"CompanyName"), "the fastmm-c authors"),
            "%s: CompanyName is not the fastmm-c authors", dll);
  CHECK_MSG(version_string(info, L"FileDescription") != NULL, "%s: no FileDescription", dll);
  const wchar_t *copyright = version_string(info, L"LegalCopyright");
  CHECK_MSG(copyright != NULL && wcsstr(copyright, L"MIT") != NULL,
            "%s: LegalCopyright does not name the MIT licence", dll);

  const char *name = dll;
  for (const char *c = dll; *c != '\0'; c++) {
    if (*c == '/' || *c == '\\') {
      name = c + 1;
    }
  }
  CHECK_MSG(equals_ascii(version_string(info, L"OriginalFilename"), name),
            "%s: OriginalFilename is not %s", dll, name);
  free(info);
}

int main(int argc, char **argv) {
  unsigned major = 0, minor = 0, patch = 0;
  char rest = 0;
  if (argc < 3 || sscanf(argv[1], "%u.%u.%u%c", &major, &minor, &patch, &rest) != 3) {
    fprintf(stderr, "usage: test_version_resource MAJOR.MINOR.PATCH DLL...\n");
    return 2;
  }
  for (int i = 2; i < argc; i++) {
    check_dll(argv[i], argv[1], major, minor, patch);
  }
  return tu_finish("test_version_resource");
}
