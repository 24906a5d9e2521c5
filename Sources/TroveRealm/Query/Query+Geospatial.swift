import Trove

/// Realm's name for the shapes a geospatial query takes: ``GeoBox``, ``GeoPolygon``, ``GeoCircle``.
public typealias RLMGeospatial = GeoShape

extension Query where T: OptionalProtocol, T.Wrapped: EmbeddedObject {
    /// The embedded point (GeoJSON's shape: a `type` of `"Point"` and
    /// `coordinates` holding longitude, then latitude) is inside `shape`:
    /// `$0.location.geoWithin(GeoCircle(center: (37.57, 126.98), radius: .kilometers(2)!)!)`.
    /// A link to a type without that shape is refused with Realm's message.
    public func geoWithin<U: RLMGeospatial>(_ shape: U) -> Query<Bool> {
        compare(.geoWithin, .value(shape))
    }
}

// A shape goes into `NSPredicate(format: "location IN %@", shape as! CVarArg)`
// as Realm's Objective-C shapes do; it is never formatted as a C argument.
extension GeoBox: CVarArg {
    public var _cVarArgEncoding: [Int] { fatalError("TroveRealm: a GeoBox is a query argument, not a C format argument") }
}

extension GeoPolygon: CVarArg {
    public var _cVarArgEncoding: [Int] {
        fatalError("TroveRealm: a GeoPolygon is a query argument, not a C format argument")
    }
}

extension GeoCircle: CVarArg {
    public var _cVarArgEncoding: [Int] {
        fatalError("TroveRealm: a GeoCircle is a query argument, not a C format argument")
    }
}
