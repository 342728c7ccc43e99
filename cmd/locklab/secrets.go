package main

import (
	"fmt"
	"os"
	"strings"
)

// maxSecretFile bounds a secret read from a file: a token or a URL.
const maxSecretFile = 4 << 10

// secretFromEnv returns the value of the environment variable name, or
// else the contents of the file that name_FILE names (how container
// platforms hand secrets to a process), without its final newline. Both
// set, or a file that cannot be read, is an error naming the variable.
func secretFromEnv(getenv func(string) string, name string) (string, error) {
	v, file := getenv(name), getenv(name+"_FILE")
	switch {
	case file == "":
		return v, nil
	case v != "":
		return "", fmt.Errorf("both %s and %s_FILE are set; set one", name, name)
	}
	return secretFile(name, file)
}

// secretFile reads the secret name from the file at path, without its
// final newline; an unreadable, empty or oversized file is an error
// naming name_FILE.
func secretFile(name, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s_FILE: %w", name, err)
	}
	defer f.Close()
	b := make([]byte, maxSecretFile+1)
	n, _ := f.Read(b)
	if n > maxSecretFile {
		return "", fmt.Errorf("%s_FILE: %s is longer than %d bytes", name, path, maxSecretFile)
	}
	s := strings.TrimRight(string(b[:n]), "\r\n")
	if s == "" {
		return "", fmt.Errorf("%s_FILE: %s is empty", name, path)
	}
	return s, nil
}

// readSecrets sets the secrets of cfg from the environment or their
// files. It reads REDIS_URL_FILE too, whose URL may hold a password, for
// redisURLFromFile.
func readSecrets(cfg *config, getenv func(string) string) error {
	var err error
	for _, s := range []struct {
		name string
		dst  *string
	}{
		{"LOCKLAB_SECRET", &cfg.secret},
		{"LOCKLAB_ADMIN_TOKEN", &cfg.adminToken},
		{"LOCKLAB_METRICS_TOKEN", &cfg.metricsToken},
	} {
		if *s.dst, err = secretFromEnv(getenv, s.name); err != nil {
			return err
		}
	}
	cfg.redisURLFile = getenv("REDIS_URL_FILE")
	return nil
}

// redisURLFromFile sets the Redis URL from the file REDIS_URL_FILE names,
// unless -redis-url or REDIS_URL gave one: it runs after the flags are
// parsed.
func redisURLFromFile(cfg *config) error {
	if cfg.redisURLFile == "" || cfg.redisURL != "" {
		return nil
	}
	url, err := secretFile("REDIS_URL", cfg.redisURLFile)
	cfg.redisURL = url
	return err
}
