/*
 * bcryptprimitives.dll for Wine 8.0, which has none.
 *
 * Go 1.22 and later read their random seed at start-up from ProcessPrng in
 * bcryptprimitives.dll (Windows 10 and later); without it every Go binary dies
 * with "fatal error: bcryptprimitives.dll not found". Wine 8.0 ships no such
 * DLL, so `make test-windows` builds this one and copies it into its throw-away
 * Wine prefix's system32. It is test scaffolding only: it is never shipped and
 * never installed on real Windows, which has the real DLL.
 *
 * ProcessPrng (https://learn.microsoft.com/en-us/windows/win32/seccng/processprng)
 * fills data with len random bytes and always returns TRUE. This shim fills it
 * through advapi32's SystemFunction036, also known as RtlGenRandom, which Wine
 * implements over the host's random source. RtlGenRandom takes a ULONG length,
 * so a buffer larger than 4 GiB - 1 is filled in pieces.
 *
 * Build: x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll bcryptprimitives.c
 */
#include <windows.h>

typedef BOOLEAN(WINAPI *rtlgenrandom_fn)(PVOID buffer, ULONG length);

static rtlgenrandom_fn rtlgenrandom(void)
{
    static rtlgenrandom_fn fn;
    if (fn == NULL) {
        HMODULE advapi = LoadLibraryA("advapi32.dll");
        if (advapi != NULL)
            fn = (rtlgenrandom_fn)(void *)GetProcAddress(advapi, "SystemFunction036");
    }
    return fn;
}

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    rtlgenrandom_fn gen = rtlgenrandom();
    if (gen == NULL)
        /* The real ProcessPrng cannot fail; a shim that cannot reach RtlGenRandom must not
         * hand back a predictable buffer either, so it stops the process. */
        ExitProcess(0xC0000001u);
    while (len > 0) {
        ULONG chunk = len > 0x80000000u ? 0x80000000u : (ULONG)len;
        if (!gen(data, chunk))
            ExitProcess(0xC0000001u);
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
