package store

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/replaytool/replay/internal/errkind"
)

// Timeouts of the S3 backend: every request is bounded, so an endpoint that
// does not answer is an error, not a hang.
const (
	s3DialTimeout   = 10 * time.Second
	s3HeaderTimeout = 60 * time.Second
	s3SmallOpTime   = 2 * time.Minute  // stat, list, conditional index writes
	s3DataOpTime    = 30 * time.Minute // one object's bytes (up to MaxObject)
	s3IAMTimeout    = 5 * time.Second  // the instance metadata service
	s3MaxRetries    = 3
)

// S3 is a Backend on a bucket of an S3-compatible service, under an optional
// key prefix. Versions are the objects' ETags; PutIf is a conditional PUT
// (If-None-Match: * to create, If-Match: etag to replace), so the service
// itself arbitrates concurrent writers.
type S3 struct {
	loc    *s3Location
	client *minio.Client
}

// OpenS3 opens s3://bucket[/prefix][?endpoint=host:port&insecure=1&region=r]
// with credentials from the standard chain read through getenv: the AWS_*
// variables, then the shared credentials file (AWS_SHARED_CREDENTIALS_FILE or
// ~/.aws/credentials, profile AWS_PROFILE), then the instance or container
// role (unless AWS_EC2_METADATA_DISABLED=true). It checks the bucket answers before returning, so a wrong endpoint,
// wrong credentials or a missing bucket are reported here, as ErrUnreachable
// or ErrNotFound.
func OpenS3(ctx context.Context, rawURL string, getenv func(string) string) (*S3, error) {
	loc, err := parseS3URL(rawURL, getenv)
	if err != nil {
		return nil, err
	}
	client, err := minio.New(loc.endpoint, &minio.Options{
		Creds:      credentialChain(getenv),
		Secure:     loc.secure,
		Region:     loc.region,
		Transport:  s3Transport(),
		MaxRetries: s3MaxRetries,
	})
	if err != nil {
		return nil, errkind.Errorf(ErrBadURL, "store %s: endpoint %s: %v", loc, loc.endpoint, err)
	}
	s := &S3{loc: loc, client: client}
	if err := s.probe(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func credentialChain(getenv func(string) string) *credentials.Credentials {
	file := getenv("AWS_SHARED_CREDENTIALS_FILE")
	if file == "" && getenv("HOME") != "" {
		file = filepath.Join(getenv("HOME"), ".aws", "credentials")
	}
	profile := firstNonEmpty(getenv("AWS_PROFILE"), "default")
	chain := []credentials.Provider{
		&credentials.Static{Value: credentials.Value{
			AccessKeyID:     firstNonEmpty(getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_ACCESS_KEY")),
			SecretAccessKey: firstNonEmpty(getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SECRET_KEY")),
			SessionToken:    getenv("AWS_SESSION_TOKEN"),
			SignerType:      credentials.SignatureV4,
		}},
		&credentials.FileAWSCredentials{Filename: file, Profile: profile},
	}
	if !strings.EqualFold(getenv("AWS_EC2_METADATA_DISABLED"), "true") {
		chain = append(chain, &credentials.IAM{Client: &http.Client{Timeout: s3IAMTimeout}})
	}
	return credentials.NewChainCredentials(chain)
}

func s3Transport() http.RoundTripper {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: s3DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   s3DialTimeout,
		ResponseHeaderTimeout: s3HeaderTimeout,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   16,
	}
}

// String returns s3://bucket/prefix (never a credential).
func (s *S3) String() string { return s.loc.String() }

// probe lists at most one key, which needs the bucket, the credentials and the
// endpoint all to be right.
func (s *S3) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s3SmallOpTime)
	defer cancel()
	// The lister stops when ctx is cancelled, so one item is all it reads.
	obj, ok := <-s.client.ListObjects(ctx, s.loc.bucket, minio.ListObjectsOptions{Prefix: s.loc.key(""), MaxKeys: 1})
	if ok && obj.Err != nil {
		return s.classify(obj.Err, "")
	}
	return nil
}

// Get returns key's bytes and its ETag. The object's size is checked against
// max from the response's headers before its body is read.
func (s *S3) Get(ctx context.Context, key string, max int64) ([]byte, string, error) {
	if err := CheckKey(key); err != nil {
		return nil, "", err
	}
	max = min(max, MaxObject)
	limit := s3SmallOpTime
	if max > 1<<20 {
		limit = s3DataOpTime
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	// One request: its headers give the size, checked before the body is read.
	body, info, _, err := (&minio.Core{Client: s.client}).GetObject(ctx, s.loc.bucket, s.loc.key(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, "", s.classify(err, key)
	}
	defer body.Close()
	if info.Size > max || info.Size < 0 {
		return nil, "", errkind.Errorf(ErrCorrupt, "store %s: %s is %d bytes, more than the %d an object of its kind may have (corrupt): remove it and push the run again", s, key, info.Size, max)
	}
	data := make([]byte, info.Size)
	if _, err := io.ReadFull(body, data); err != nil {
		return nil, "", s.classify(err, key)
	}
	return data, info.ETag, nil
}

// Has reports whether key exists.
func (s *S3) Has(ctx context.Context, key string) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, s3SmallOpTime)
	defer cancel()
	_, err := s.client.StatObject(ctx, s.loc.bucket, s.loc.key(key), minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if code := minio.ToErrorResponse(err).Code; code == "NoSuchKey" || code == "NotFound" {
		return false, nil
	}
	return false, s.classify(err, key)
}

// Put writes key in one request (S3 objects appear whole or not at all).
func (s *S3) Put(ctx context.Context, key string, data []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	_, err := s.put(ctx, key, data, minio.PutObjectOptions{}, s3DataOpTime)
	return err
}

// PutIf writes key only if its ETag is ver ("" = the key must not exist).
func (s *S3) PutIf(ctx context.Context, key string, data []byte, ver string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	var opts minio.PutObjectOptions
	if ver == "" {
		opts.SetMatchETagExcept("*")
	} else {
		opts.SetMatchETag(ver)
	}
	return s.put(ctx, key, data, opts, s3SmallOpTime)
}

func (s *S3) put(ctx context.Context, key string, data []byte, opts minio.PutObjectOptions, limit time.Duration) (string, error) {
	if len(data) > MaxObject {
		return "", errkind.Errorf(ErrBadURL, "store %s: %s is larger than %d bytes", s, key, MaxObject)
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	opts.ContentType = "application/octet-stream"
	info, err := s.client.PutObject(ctx, s.loc.bucket, s.loc.key(key), bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		return "", s.classify(err, key)
	}
	return info.ETag, nil
}

// List returns the keys under prefix, sorted; at most maxListKeys keys and
// maxListBytes of names, within one bounded time.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, s3SmallOpTime)
	defer cancel()
	full := s.loc.key(prefix) // key("") is "prefix/" under a prefix
	var (
		keys  []string
		bytes int
	)
	for obj := range s.client.ListObjects(ctx, s.loc.bucket, minio.ListObjectsOptions{Prefix: full, Recursive: true}) {
		if obj.Err != nil {
			return nil, s.classify(obj.Err, prefix)
		}
		bytes += len(obj.Key)
		if len(keys) >= maxListKeys || bytes > maxListBytes {
			return nil, errkind.Errorf(ErrCorrupt, "store %s: more than %d keys (%d bytes of names) under %q: the store is not one replay wrote, or needs pruning", s, maxListKeys, maxListBytes, prefix)
		}
		k := obj.Key
		if s.loc.prefix != "" {
			k = strings.TrimPrefix(k, s.loc.prefix+"/")
		}
		if CheckKey(k) == nil && strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, nil
}
