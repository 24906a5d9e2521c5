#include "CTroveRuntime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#include <mach-o/getsect.h>
#endif

// What a metadata access function returns (swift/ABI/Metadata.h: MetadataResponse).
typedef struct {
    const void *metadata;
    size_t state;
} MetadataResponse;

typedef MetadataResponse (*MetadataAccessor)(size_t request) __attribute__((swiftcall));

// Context descriptor kinds and flags (swift/ABI/MetadataValues.h).
enum { kindMask = 0x1F, kindClass = 16, flagGeneric = 0x80 };

// Walks one section of type metadata records: each is a 32-bit offset, from
// the record, to a type context descriptor; its low two bits say whether the
// offset reaches the descriptor (0) or a pointer to it (1); 2 and 3 name
// Objective-C classes, which are not Swift's.
static void visit_records(const char *start, size_t length, void (*visit)(const void *, void *), void *context) {
    for (const char *record = start; record + sizeof(int32_t) <= start + length; record += sizeof(int32_t)) {
        int32_t offset = *(const int32_t *)record;
        int kind = offset & 3;
        if (kind > 1) continue;
        const char *target = record + (offset & ~3);
        const char *descriptor = kind == 1 ? *(const char *const *)target : target;
        if (descriptor == NULL) continue;
        uint32_t flags = *(const uint32_t *)descriptor;
        if ((flags & kindMask) != kindClass || (flags & flagGeneric) != 0) continue;
        // A type descriptor: flags, parent, name, then the access function (all relative).
        const char *field = descriptor + 12;
        int32_t accessorOffset = *(const int32_t *)field;
        if (accessorOffset == 0) continue;
        MetadataAccessor accessor = (MetadataAccessor)(field + accessorOffset);
        MetadataResponse response = accessor(0);
        if (response.metadata != NULL) visit(response.metadata, context);
    }
}

#if defined(__APPLE__)

void trove_enumerate_classes(void (*visit)(const void *metadata, void *context), void *context) {
    uint32_t count = _dyld_image_count();
    for (uint32_t index = 0; index < count; index++) {
        const struct mach_header *header = _dyld_get_image_header(index);
        if (header == NULL) continue;
        unsigned long size = 0;
        const uint8_t *section =
            getsectiondata((const struct mach_header_64 *)header, "__TEXT", "__swift5_types", &size);
        if (section != NULL) visit_records((const char *)section, size, visit, context);
    }
}

#else

// The Swift runtime's record of each image's metadata sections
// (swift/shims/MetadataSections.h); only the fields up to the type records are read.
typedef struct {
    uintptr_t start;
    size_t length;
} SectionRange;

typedef struct {
    uintptr_t version;
    const void *baseAddress;
    void *unused0;
    void *unused1;
    SectionRange protocols;
    SectionRange protocolConformances;
    SectionRange typeMetadata;
} MetadataSections;

extern void swift_enumerateAllMetadataSections(bool (*body)(const MetadataSections *sections, void *context),
                                               void *context) __attribute__((weak));

typedef struct {
    void (*visit)(const void *, void *);
    void *context;
} Visitor;

static bool visit_sections(const MetadataSections *sections, void *context) {
    const Visitor *visitor = context;
    visit_records((const char *)sections->typeMetadata.start, sections->typeMetadata.length, visitor->visit,
                  visitor->context);
    return true;
}

void trove_enumerate_classes(void (*visit)(const void *metadata, void *context), void *context) {
    if (swift_enumerateAllMetadataSections == NULL) return;
    Visitor visitor = {visit, context};
    swift_enumerateAllMetadataSections(visit_sections, &visitor);
}

#endif
