// trove: browse and export Trove databases from the command line.
// See `trove --help`.

import Foundation
import Trove

let all = Array(CommandLine.arguments.dropFirst())
guard let command = all.first, command != "--help", command != "-h", command != "help" else {
    print(Commands.usage)
    exit(all.isEmpty ? 2 : 0)
}
if command == "--version" {
    print(Commands.version)
    exit(0)
}

do {
    let arguments = try Arguments(all.dropFirst())
    Commands.checksEveryPage = !arguments.flags.contains("--trust")
    if arguments.flags.contains("--help") || arguments.flags.contains("-h") {
        print(Commands.help[command] ?? Commands.usage)
        exit(0)
    }
    switch command {
    case "info": try Commands.info(arguments)
    case "schema": try Commands.schema(arguments)
    case "query": try Commands.query(arguments)
    case "export": try Export.run(arguments)
    case "verify": try Commands.verify(arguments)
    case "set": try Commands.set(arguments)
    case "import": try Import.run(arguments)
    case "shell": try Shell.run(arguments)
    case "delete": try Commands.delete(arguments)
    case "copy": try Commands.copy(arguments)
    case "compact": try Commands.compact(arguments)
    case "convert": try Commands.convert(arguments)
    case "studio": try Studio.run(arguments)
    case "sync": try SyncCommands.run(arguments)
    default: throw UsageError("unknown command '\(command)'")
    }
} catch let error as UsageError {
    FileHandle.standardError.write(Data("trove: \(error.message)\n\(Commands.help[command] ?? Commands.usage)\n".utf8))
    exit(2)
} catch let error as TroveError {
    FileHandle.standardError.write(Data("trove: \(error.message)\n".utf8))
    exit(1)
} catch {
    FileHandle.standardError.write(Data("trove: \(error)\n".utf8))
    exit(1)
}
