@_exported import TroveStorage
