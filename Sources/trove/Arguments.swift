/// A small command-line parser: positional arguments and `--name value` /
/// `--flag` options, as each command declares them.
struct Arguments {
    var positional: [String] = []
    var options: [String: String] = [:]
    var flags: Set<String> = []

    /// Options that take a value; everything else starting with `-` is a flag.
    static let valued: Set<String> = [
        "--sort", "--limit", "--format", "--type", "-o", "--output", "--batch", "--port", "--device-role", "--principal",
        "--space", "--device", "--server", "--token", "--types",
    ]

    init(_ arguments: some Sequence<String>) throws {
        var iterator = arguments.makeIterator()
        var onlyPositional = false
        while let argument = iterator.next() {
            // A negative number is a value, not an option.
            if onlyPositional || !argument.hasPrefix("-") || argument == "-" || Double(argument) != nil {
                positional.append(argument)
            } else if argument == "--" {
                onlyPositional = true
            } else if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                options[String(argument[..<equals])] = String(argument[argument.index(after: equals)...])
            } else if Arguments.valued.contains(argument) {
                guard let value = iterator.next() else { throw UsageError("\(argument) needs a value") }
                options[argument] = value
            } else {
                flags.insert(argument)
            }
        }
    }

    func option(_ names: String...) -> String? {
        names.lazy.compactMap { options[$0] }.first
    }

    /// Fails on any option or flag the command does not know.
    func allow(options known: Set<String> = [], flags knownFlags: Set<String> = []) throws {
        let commonFlags: Set<String> = ["--help", "-h", "--json", "--trust"]
        if let unknown = options.keys.first(where: { !known.contains($0) }) { throw UsageError("unknown option \(unknown)") }
        if let unknown = flags.first(where: { !knownFlags.contains($0) && !commonFlags.contains($0) }) {
            throw UsageError("unknown option \(unknown)")
        }
    }
}

/// A mistake in how the tool was called: printed with the command's usage, exit code 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
