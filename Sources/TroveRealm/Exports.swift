// TroveRealm: Realm Swift's public surface on Trove, so that Realm code
// builds by changing `import RealmSwift` to `import TroveRealm`. Trove's own
// types (Object, List, Results, @Persisted...) carry Realm's names already
// and come with this import.
@_exported import Trove

/// Realm Swift's module name, for code that spells types through it
/// (`RealmSwift.Object`, `RealmSwift.List`): the same types as TroveRealm's.
public enum RealmSwift {
    /// ``Trove/Object``.
    public typealias Object = Trove.Object
    /// ``Trove/EmbeddedObject``.
    public typealias EmbeddedObject = Trove.EmbeddedObject
    /// ``Realm``.
    public typealias Realm = TroveRealm.Realm
    /// ``Trove/List``.
    public typealias List<Element: _TroveStorable> = Trove.List<Element>
    /// ``Trove/MutableSet``.
    public typealias MutableSet<Element: _TroveStorable & Hashable> = Trove.MutableSet<Element>
    /// ``Trove/Map``.
    public typealias Map<Key: _TroveMapKey, Value: _TroveStorable> = Trove.Map<Key, Value>
    /// ``Trove/LinkingObjects``.
    public typealias LinkingObjects<Element: Object> = Trove.LinkingObjects<Element>
    /// ``Trove/Results``.
    public typealias Results<Element> = Trove.Results<Element>
    /// ``Trove/SortDescriptor`` (Foundation has one of the same name).
    public typealias SortDescriptor = Trove.SortDescriptor
}

/// Realm's name for a property's schema (``Trove/PropertySchema``).
public typealias Property = PropertySchema
