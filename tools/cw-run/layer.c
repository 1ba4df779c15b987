/* SPDX-License-Identifier: MIT */
/*
 * The OpenCL layer: the preload's wrappers, reached through the ICD loader's
 * dispatch (CL/cl_layer.h), so that a program that loads libOpenCL itself
 * and looks its entry points up with dlsym (OpenCV, hashcat, darktable) is
 * interposed as well as one that links it. cw-run names this object in
 * OPENCL_LAYERS; the loader (ocl-icd 2.3 or later, the Khronos loader)
 * dlopens it RTLD_LOCAL once it has found its ICDs, checks clGetLayerInfo's
 * API version and calls clInitLayer with the dispatch table of the level
 * below (the next layer, or its own table that dispatches to the ICDs).
 * Every call the program makes through the loader then goes to the table
 * returned here first.
 *
 * One object, one set of wrappers, two ways in. The table holds this
 * object's own wrappers (-Bsymbolic-functions in CMakeLists.txt: without it
 * `&clFinish` here would be the first clFinish of the global scope, the
 * loader's, and the table would send the loader's calls back to it), and
 * cwp_real (real.h) becomes the table below, so a wrapper's real call goes
 * one level down. The calls cw makes itself (status reads, callbacks,
 * flushes, references) go there too: this file defines them in the object.
 *
 * Not twice. When the object is also in the global scope (LD_PRELOADed, or
 * another copy of it is), the preload's wrappers already catch the
 * program's calls and forward them to the loader, which would hand them to
 * the layer again: the layer then stands aside (an empty table, which the
 * loader fills from the level below).
 */
#include "layer.h"

#include <CL/cl_layer.h>

#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "preload.h"
#include "real.h"

/* The table returned to the loader; written in clInitLayer, which the
 * loader calls once, before any call can go through it. */
static cl_icd_dispatch table;
static bool layer_on;

const char *cwp_mechanism(void) {
    return layer_on ? "layer" : "preload";
}

CWP_EXPORT cl_int clGetLayerInfo(cl_layer_info param_name, size_t param_value_size,
                                 void *param_value, size_t *param_value_size_ret) {
    static const char name[] = "cw-run: cw's waits (libcw_preload.so)";
    const void *v;
    size_t n;
    cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    switch (param_name) {
    case CL_LAYER_API_VERSION:
        v = &version;
        n = sizeof version;
        break;
    case CL_LAYER_NAME:
        v = name;
        n = sizeof name;
        break;
    default:
        return CL_INVALID_VALUE;
    }
    if (param_value) {
        if (param_value_size < n)
            return CL_INVALID_VALUE;
        memcpy(param_value, v, n);
    }
    if (param_value_size_ret)
        *param_value_size_ret = n;
    return CL_SUCCESS;
}

/* A cw preload in the global scope: an object there exports both
 * clInitLayer and the clWaitForEvents the program's own calls bind to. The
 * handle of the main program searches exactly that scope (RTLD_DEFAULT
 * would search this object's own local scope too). */
static bool preload_in_global_scope(void) {
    void *prog = dlopen(NULL, RTLD_LAZY);
    if (!prog)
        return false;
    void *init = dlsym(prog, "clInitLayer");
    void *wait = dlsym(prog, "clWaitForEvents");
    dlclose(prog);
    Dl_info a, b;
    return init && wait && dladdr(init, &a) && dladdr(wait, &b) && a.dli_fbase == b.dli_fbase;
}

#define CWP_DISPATCH_SLOTS (sizeof(cl_icd_dispatch) / sizeof(void *))

CWP_EXPORT cl_int clInitLayer(cl_uint num_entries, const cl_icd_dispatch *target_dispatch,
                              cl_uint *num_entries_ret,
                              const cl_icd_dispatch **layer_dispatch_ret) {
    if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret)
        return CL_INVALID_VALUE;
    cwp_init();
    /* The level below, as far as the loader's table reaches (its size is
     * num_entries; a newer header's table may be longer than the loader's). */
    cl_icd_dispatch below;
    memset(&below, 0, sizeof below);
    size_t n = num_entries < CWP_DISPATCH_SLOTS ? num_entries : CWP_DISPATCH_SLOTS;
    memcpy(&below, target_dispatch, n * sizeof(void *));
    memset(&table, 0, sizeof table);
    *num_entries_ret = (cl_uint)CWP_DISPATCH_SLOTS;
    *layer_dispatch_ret = &table;
    if (!cwp_cfg.active || preload_in_global_scope())
        return CL_SUCCESS;
#define CWP_BELOW(field, function) (below.function != NULL) &&
    if (!(CWP_REAL_1_2(CWP_BELOW) CWP_REAL_OWN(CWP_BELOW) true)) {
        cwp_warn("%s", "the level below the layer lacks OpenCL 1.2 entry points: the layer "
                       "interposes nothing");
        return CL_SUCCESS;
    }
#undef CWP_BELOW
#define CWP_FROM_BELOW(field, function) cwp_real.field = (__typeof__(cwp_real.field))below.function;
    CWP_REAL_1_2(CWP_FROM_BELOW)
    CWP_REAL_OWN(CWP_FROM_BELOW)
    CWP_REAL_2_0(CWP_FROM_BELOW)
#undef CWP_FROM_BELOW
    /* An SVM entry the level below lacks stays empty: the loader copies its
     * NULL, as without the layer. */
#define CWP_MINE(field, function)                                                                  \
    if (cwp_real.field)                                                                            \
        table.function = &function;
    CWP_REAL_1_2(CWP_MINE)
    CWP_REAL_2_0(CWP_MINE)
#undef CWP_MINE
    layer_on = true;
    return CL_SUCCESS;
}

/*
 * The OpenCL calls that cw and the wrappers make themselves (the object's
 * only undefined OpenCL references otherwise). Hidden definitions bind
 * them here at link time, so they go through cwp_real: preloaded, to the
 * loader as before; as a layer, one level down, so neither the layers
 * above nor the loader see cw's own calls, and a program's private copy of
 * a loader is never mixed with the system's.
 */
cl_int clGetEventInfo(cl_event e, cl_event_info p, size_t size, void *v, size_t *ret) {
    return cwp_real.get_event_info(e, p, size, v, ret);
}

cl_int clSetEventCallback(cl_event e, cl_int type, void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                          void *data) {
    return cwp_real.set_event_callback(e, type, fn, data);
}

cl_int clFlush(cl_command_queue q) {
    return cwp_real.flush(q);
}

cl_int clRetainEvent(cl_event e) {
    return cwp_real.retain_event(e);
}

cl_int clReleaseEvent(cl_event e) {
    return cwp_real.release_event(e);
}

cl_int clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info p, size_t size, void *v,
                             size_t *ret) {
    return cwp_real.get_queue_info(q, p, size, v, ret);
}

cl_int clGetDeviceInfo(cl_device_id d, cl_device_info p, size_t size, void *v, size_t *ret) {
    return cwp_real.get_device_info(d, p, size, v, ret);
}

/*
 * An ICD is loaded: an object other than the loader exports
 * clGetExtensionFunctionAddress, the one entry point the loaders require of
 * an ICD, and the loader loads one only once the program has called it
 * (the loader is the object the preload's real calls go to). At exit the
 * objects are already finalised (this handler runs from the object's own
 * fini), so nothing may be opened then: dlopen would run an initialiser
 * again. The symbol is looked up in each object's own GNU hash table,
 * which only reads memory that stays mapped.
 */
static uint32_t gnu_hash(const char *s) {
    uint32_t h = 5381;
    for (; *s; ++s)
        h = h * 33 + (unsigned char)*s;
    return h;
}

/* glibc relocates the dynamic section's pointers in place, except where it
 * is read-only (the vDSO): an unrelocated one is below the load address. */
static const void *dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p) {
    return (const void *)(p < info->dlpi_addr ? p + info->dlpi_addr : p);
}

static int defines_icd_entry(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    static const char name[] = "clGetExtensionFunctionAddress";
    const ElfW(Dyn) *dyn = NULL;
    uintptr_t loader = (uintptr_t)cwp_real.wait_for_events;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t at = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const void *)at;
        else if (ph->p_type == PT_LOAD && loader >= at && loader - at < ph->p_memsz)
            return 0;
    }
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    const uint32_t *gh = NULL;
    for (; dyn && dyn->d_tag != DT_NULL; ++dyn) {
        if (dyn->d_tag == DT_SYMTAB)
            sym = dyn_ptr(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_STRTAB)
            str = dyn_ptr(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_GNU_HASH)
            gh = dyn_ptr(info, dyn->d_un.d_ptr);
    }
    if (!sym || !str || !gh || gh[0] == 0)
        return 0;
    /* nbuckets, symoffset, bloom words, bloom shift, bloom, buckets, chains */
    uint32_t h = gnu_hash(name), nbuckets = gh[0], symoffset = gh[1];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gh + 4) + gh[2]);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return 0;
    for (;; ++i) {
        uint32_t c = chain[i - symoffset];
        if ((c | 1u) == (h | 1u) && sym[i].st_shndx != SHN_UNDEF &&
            !strcmp(str + sym[i].st_name, name)) {
            *(bool *)data = true;
            return 1;
        }
        if (c & 1u)
            return 0;
    }
}

static bool icd_loaded(void) {
    bool found = false;
    dl_iterate_phdr(defines_icd_entry, &found);
    return found;
}

void cwp_reach_notice(void) {
    if (!cwp_cfg.active || atomic_load_explicit(&cwp_reached, memory_order_relaxed))
        return;
    if (layer_on) {
        /* Through the layer every call reaches the table: there was none
         * to interpose. */
        cwp_warn("%s", "no call went through cw: the program used OpenCL but made none of the "
                       "calls cw-run handles (enqueues, waits)");
        return;
    }
    if (icd_loaded())
        cwp_warn("%s", "no call went through cw: the program used OpenCL, but not through the "
                       "preload (it loads OpenCL itself, with dlopen and dlsym?); the OpenCL "
                       "layer reaches such programs where the loader supports layers "
                       "(CW_RUN_MECHANISM in cw-run(1))");
}
