#ifndef CTROVERUNTIME_H
#define CTROVERUNTIME_H

/// Calls `visit` with the type metadata of every non-generic Swift class in
/// the process's loaded images, read from the Swift runtime's type records
/// (the `swift5_type_metadata` sections). TroveRealm finds the app's model
/// classes with it, as Realm finds every `Object` subclass through the
/// Objective-C runtime.
void trove_enumerate_classes(void (*visit)(const void *metadata, void *context), void *context);

#endif
