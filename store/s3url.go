package store

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
)

// defaultS3Endpoint is AWS's global S3 endpoint, used when neither the URL nor
// the environment names one.
const defaultS3Endpoint = "s3.amazonaws.com"

// s3Location is a parsed s3:// store URL with the endpoint resolved.
type s3Location struct {
	bucket   string
	prefix   string // "" or a clean key prefix without a trailing slash
	endpoint string // host[:port]
	secure   bool
	region   string
	raw      string // the URL as given, for messages (it never holds a secret)
}

// parseS3URL reads s3://bucket[/prefix][?endpoint=host:port&insecure=1&region=r].
// The endpoint comes from the URL, else AWS_ENDPOINT_URL_S3, else
// AWS_ENDPOINT_URL, else AWS; the region from the URL, else AWS_REGION, else
// AWS_DEFAULT_REGION (else asked of the bucket on AWS, us-east-1 elsewhere).
func parseS3URL(raw string, getenv func(string) string) (*s3Location, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" {
		return nil, errkind.Errorf(ErrBadURL, "store URL %q: not an s3://bucket/prefix URL", raw)
	}
	if u.User != nil {
		return nil, errkind.Errorf(ErrBadURL, "store URL s3://%s%s: credentials do not go in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or a profile in ~/.aws/credentials", u.Host, u.Path)
	}
	if err := checkBucket(u.Host); err != nil {
		return nil, errkind.Errorf(ErrBadURL, "store URL %q: %v", raw, err)
	}
	loc := &s3Location{bucket: u.Host, secure: true, raw: raw}
	if p := strings.Trim(u.Path, "/"); p != "" {
		if CheckKey(p) != nil || path.Clean(p) != p {
			return nil, errkind.Errorf(ErrBadURL, "store URL %q: the prefix %q must be a clean relative path (no '.', '..' or empty parts)", raw, p)
		}
		loc.prefix = p
	}
	q := u.Query()
	for k := range q {
		if k != "endpoint" && k != "insecure" && k != "region" {
			return nil, errkind.Errorf(ErrBadURL, "store URL %q: unknown parameter %q (known: endpoint, insecure, region)", raw, k)
		}
	}
	if err := loc.resolveEndpoint(q, getenv); err != nil {
		return nil, err
	}
	loc.region = firstNonEmpty(q.Get("region"), getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"))
	if loc.region == "" && loc.endpoint != defaultS3Endpoint {
		loc.region = "us-east-1"
	}
	return loc, nil
}

func (l *s3Location) resolveEndpoint(q url.Values, getenv func(string) string) error {
	switch ins := q.Get("insecure"); ins {
	case "", "0", "false":
	case "1", "true":
		l.secure = false
	default:
		return errkind.Errorf(ErrBadURL, "store URL %q: insecure=%q: use insecure=1 for plain HTTP", l.raw, ins)
	}
	if ep := q.Get("endpoint"); ep != "" {
		if strings.Contains(ep, "/") {
			return errkind.Errorf(ErrBadURL, "store URL %q: endpoint=%q: give host:port only (add insecure=1 for plain HTTP)", l.raw, ep)
		}
		l.endpoint = ep
		return nil
	}
	for _, name := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		v := getenv(name)
		if v == "" {
			continue
		}
		eu, err := url.Parse(v)
		if err != nil || eu.Host == "" || (eu.Scheme != "http" && eu.Scheme != "https") {
			return errkind.Errorf(ErrBadURL, "%s=%q: not an http(s)://host[:port] URL", name, v)
		}
		l.endpoint = eu.Host
		l.secure = eu.Scheme == "https"
		return nil
	}
	l.endpoint = defaultS3Endpoint
	return nil
}

// checkBucket applies S3's bucket naming rules (3-63 lower-case letters,
// digits, dots and hyphens, starting and ending with a letter or digit).
func checkBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters", b)
	}
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || ((c == '-' || c == '.') && i > 0 && i < len(b)-1)
		if !ok {
			return fmt.Errorf("bucket name %q: only lower-case letters, digits, '.' and '-' (not at the ends)", b)
		}
	}
	return nil
}

// String gives the URL back in its canonical form, without credentials.
func (l *s3Location) String() string {
	s := "s3://" + l.bucket
	if l.prefix != "" {
		s += "/" + l.prefix
	}
	return s
}

// key maps a store key to the object name in the bucket.
func (l *s3Location) key(k string) string {
	if l.prefix == "" {
		return k
	}
	return l.prefix + "/" + k
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
