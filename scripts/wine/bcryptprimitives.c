/* A stand-in for bcryptprimitives.dll, which Wine 8.0 lacks: Rust's standard library (1.78+)
 * imports ProcessPrng from it on Windows, and every Rust program exits with code 53 without
 * it. Wine 9 ships the DLL; this is only a workaround for Wine 8 (Debian 12), built with
 * MinGW by scripts/wine.sh into the test prefix. Never used on real Windows.
 *
 * ProcessPrng fills the buffer with random bytes and always returns TRUE; this forwards to
 * RtlGenRandom (advapi32's SystemFunction036), which Wine has. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
