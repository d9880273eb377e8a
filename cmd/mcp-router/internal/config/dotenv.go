package config

// ReadEnvFile reads the KEY=VALUE lines of a dotenv file (# comments, an optional "export ", values
// optionally quoted), at most 1 MiB.
func ReadEnvFile(path string) (map[string]string, error) {
	data, err := readBounded(path, maxEnvFile)
	if err != nil {
		return nil, err
	}
	return parseEnvFile(data), nil
}
