import Foundation

/// A point on the Earth: latitude and longitude in degrees, and an altitude
/// (not used by queries). Realm's `GeoPoint`.
///
/// Points are not stored as such: a model stores one as an embedded object
/// with a `type` string `"Point"` and `coordinates`, a list of longitude then
/// latitude (GeoJSON's shape), and ``GeoBox``, ``GeoPolygon`` and
/// ``GeoCircle`` find the objects whose point is inside them.
///
/// ```swift
/// final class Location: EmbeddedObject {
///     @Persisted var coordinates = List<Double>()   // [longitude, latitude]
///     @Persisted var type = "Point"
/// }
/// let seoul = GeoPoint(latitude: 37.5665, longitude: 126.978)!
/// ```
public struct GeoPoint: Hashable, Sendable, CustomStringConvertible {
    /// Degrees north of the equator (negative: south), -90...90.
    public let latitude: Double
    /// Degrees east of Greenwich (negative: west), -180...180.
    public let longitude: Double
    /// Metres above the surface; queries do not use it.
    public let altitude: Double

    /// A point, or nil when the latitude is outside -90...90, the longitude
    /// outside -180...180, the altitude negative, or any of them NaN.
    public init?(latitude: Double, longitude: Double, altitude: Double = 0) {
        guard (-90...90).contains(latitude), (-180...180).contains(longitude), altitude >= 0 else { return nil }
        (self.latitude, self.longitude, self.altitude) = (latitude, longitude, altitude)
    }

    /// `[longitude, latitude, altitude]`, as GeoJSON orders them.
    public var description: String {
        "[\(GeoPoint.text(longitude)), \(GeoPoint.text(latitude)), \(GeoPoint.text(altitude))]"
    }

    /// A coordinate with six significant digits, as realm-core writes them in messages.
    static func text(_ value: Double) -> String {
        let text = String(format: "%.6g", value)
        return text == "-0" ? "0" : text
    }

    /// The point as a unit vector from the Earth's centre.
    var unitVector: GeoVector {
        let (lat, lng) = (latitude * .pi / 180, longitude * .pi / 180)
        return GeoVector(cos(lat) * cos(lng), cos(lat) * sin(lng), sin(lat))
    }
}

/// A distance on the Earth's surface, kept as the angle it spans at the
/// Earth's centre (Realm's `Distance`, with Realm's radius of 6,378.1 km).
///
/// ```swift
/// let near = GeoCircle(center: (37.5665, 126.978), radius: .kilometers(5)!)
/// ```
public struct Distance: Hashable, Sendable {
    /// The Earth's radius the conversions use, in metres.
    static let earthRadius = 6_378_100.0

    /// The angle, in radians.
    public let radians: Double

    private init?(_ radians: Double) {
        guard radians >= 0 else { return nil }  // NaN too
        self.radians = radians
    }

    /// A distance of `radians`; nil when negative or NaN.
    public static func radians(_ radians: Double) -> Distance? { Distance(radians) }
    /// A distance of `degrees` of arc; nil when negative or NaN.
    public static func degrees(_ degrees: Double) -> Distance? { Distance(degrees * .pi / 180) }
    /// A distance of `kilometers` along the surface; nil when negative or NaN.
    public static func kilometers(_ kilometers: Double) -> Distance? { Distance(kilometers * 1000 / earthRadius) }
    /// A distance of `miles` along the surface; nil when negative or NaN.
    public static func miles(_ miles: Double) -> Distance? { Distance(miles * 1609.344 / earthRadius) }

    /// The distance in degrees of arc.
    public func asDegrees() -> Double { radians * 180 / .pi }
    /// The distance in kilometres.
    public func asKilometers() -> Double { radians * Distance.earthRadius / 1000 }
    /// The distance in miles.
    public func asMiles() -> Double { radians * Distance.earthRadius / 1609.344 }
}

/// A shape a geospatial query looks for points in: ``GeoBox``,
/// ``GeoPolygon`` or ``GeoCircle`` (Realm's `RLMGeospatial`).
///
/// ```swift
/// let inside = try db.objects(Cafe.self).filter("location GEOWITHIN %@", GeoCircle(center: (37.56, 126.97), radiusInRadians: 0.001)!)
/// ```
public protocol GeoShape: Sendable, CustomStringConvertible {
    /// The shape as the region a query tests points against, or why it is not a valid region.
    var _geoRegion: Result<GeoRegion, TroveError> { get }
}

/// A rectangle between two corners (Realm's `GeoBox`); its sides are
/// the shortest paths on the sphere between the corners, as realm-core's are.
///
/// ```swift
/// let city = GeoBox(bottomLeft: (37.41, 126.76), topRight: (37.70, 127.18))!
/// ```
public struct GeoBox: GeoShape, Hashable {
    /// The south-west corner.
    public let bottomLeft: GeoPoint
    /// The north-east corner.
    public let topRight: GeoPoint

    /// A box between two corners.
    ///
    /// ```swift
    /// let box = GeoBox(bottomLeft: GeoPoint(latitude: 37.4, longitude: 126.8)!, topRight: GeoPoint(latitude: 37.7, longitude: 127.2)!)
    /// ```
    public init(bottomLeft: GeoPoint, topRight: GeoPoint) {
        (self.bottomLeft, self.topRight) = (bottomLeft, topRight)
    }

    /// A box from `(latitude, longitude)` corners; nil when one is not a valid point.
    public init?(bottomLeft: (Double, Double), topRight: (Double, Double)) {
        guard let low = GeoPoint(latitude: bottomLeft.0, longitude: bottomLeft.1),
            let high = GeoPoint(latitude: topRight.0, longitude: topRight.1)
        else { return nil }
        self.init(bottomLeft: low, topRight: high)
    }

    /// The box as the polygon it is: its corners counter-clockwise from the bottom left.
    var polygon: GeoPolygon {
        let (low, high) = (bottomLeft, topRight)
        let upperLeft = GeoPoint(latitude: high.latitude, longitude: low.longitude)!
        let lowerRight = GeoPoint(latitude: low.latitude, longitude: high.longitude)!
        return GeoPolygon(unchecked: [low, upperLeft, high, lowerRight, low], holes: [])
    }

    /// The box as realm-core prints it: the polygon of its corners.
    public var description: String { polygon.description }
    public var _geoRegion: Result<GeoRegion, TroveError> { polygon._geoRegion }
}

/// A polygon: an outer ring and holes in it, each closed (its last point is
/// its first) with at least three other points (Realm's `GeoPolygon`). Edges
/// are the shortest paths on the sphere; a ring encloses the smaller of the
/// two regions it divides the sphere into.
///
/// ```swift
/// let park = GeoPolygon(outerRing: [(37.52, 126.93), (37.53, 126.99), (37.51, 126.99), (37.52, 126.93)])!
/// ```
public struct GeoPolygon: GeoShape, Hashable {
    /// The boundary, closed: its last point is its first.
    public let outerRing: [GeoPoint]
    /// Rings inside the outer one whose points are not in the polygon.
    public let holes: [[GeoPoint]]

    /// A polygon, or nil when a ring has fewer than four points or is not closed.
    public init?(outerRing: [GeoPoint], holes: [[GeoPoint]] = []) {
        for ring in [outerRing] + holes {
            guard ring.count > 3, ring.first == ring.last else { return nil }
        }
        self.init(unchecked: outerRing, holes: holes)
    }

    /// A polygon from `(latitude, longitude)` points; nil when a ring is too
    /// short or not closed, or a point is not valid.
    ///
    /// ```swift
    /// let triangle = GeoPolygon(outerRing: [(0, 0), (1, 1), (2, 0), (0, 0)])
    /// ```
    public init?(outerRing: [(Double, Double)], holes: [[(Double, Double)]] = []) {
        func points(_ ring: [(Double, Double)]) -> [GeoPoint]? {
            let points = ring.compactMap { GeoPoint(latitude: $0.0, longitude: $0.1) }
            return points.count == ring.count ? points : nil
        }
        guard let outer = points(outerRing) else { return nil }
        var inner: [[GeoPoint]] = []
        for hole in holes {
            guard let points = points(hole) else { return nil }
            inner.append(points)
        }
        self.init(outerRing: outer, holes: inner)
    }

    /// A polygon from `(latitude, longitude)` points, with the holes listed one by one.
    ///
    /// ```swift
    /// let framed = GeoPolygon(outerRing: [(0, 0), (0, 9), (9, 9), (9, 0), (0, 0)], holes: [(1, 1), (1, 2), (2, 2), (1, 1)])
    /// ```
    public init?(outerRing: [(Double, Double)], holes: [(Double, Double)]...) {
        self.init(outerRing: outerRing, holes: holes)
    }

    init(unchecked outerRing: [GeoPoint], holes: [[GeoPoint]]) {
        (self.outerRing, self.holes) = (outerRing, holes)
    }

    /// The rings as realm-core prints them: `GeoPolygon({[lng, lat, alt], …}, {…})`.
    public var description: String {
        let rings = ([outerRing] + holes).map { "{" + $0.map(\.description).joined(separator: ", ") + "}" }
        return "GeoPolygon(\(rings.joined(separator: ", ")))"
    }

    public var _geoRegion: Result<GeoRegion, TroveError> {
        Result { try GeoRegion(polygon: self) }.mapError { $0 as? TroveError ?? TroveError(.invalidQuery, "\($0)") }
    }
}

/// The points within a distance of a centre (Realm's `GeoCircle`).
///
/// ```swift
/// let nearby = GeoCircle(center: (37.5665, 126.978), radius: .kilometers(2)!)!
/// ```
public struct GeoCircle: GeoShape, Hashable {
    /// The centre.
    public let center: GeoPoint
    /// The radius, as the angle at the Earth's centre.
    public let radians: Double

    /// A circle, or nil when the radius is negative or NaN.
    public init?(center: GeoPoint, radiusInRadians: Double) {
        guard radiusInRadians >= 0 else { return nil }
        (self.center, radians) = (center, radiusInRadians)
    }

    /// A circle of a ``Distance``.
    public init?(center: GeoPoint, radius: Distance) {
        self.init(center: center, radiusInRadians: radius.radians)
    }

    /// A circle around a `(latitude, longitude)` centre; nil when the centre is not a valid point.
    public init?(center: (Double, Double), radiusInRadians: Double) {
        guard let point = GeoPoint(latitude: center.0, longitude: center.1) else { return nil }
        self.init(center: point, radiusInRadians: radiusInRadians)
    }

    /// A circle of a ``Distance`` around a `(latitude, longitude)` centre.
    public init?(center: (Double, Double), radius: Distance) {
        self.init(center: center, radiusInRadians: radius.radians)
    }

    /// The circle as realm-core prints it: `GeoCircle([lng, lat, alt], radians)`.
    public var description: String { "GeoCircle(\(center), \(GeoPoint.text(radians)))" }
    public var _geoRegion: Result<GeoRegion, TroveError> { .success(GeoRegion(circle: self)) }
}
