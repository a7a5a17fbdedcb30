package store

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/minio/minio-go/v7"
	"github.com/replaytool/replay/internal/errkind"
)

// classify turns a client error into one line of the store's error kinds,
// naming the store and what to do. key is "" for the bucket itself.
func (s *S3) classify(err error, key string) error {
	what := s.String()
	if key != "" {
		what += ": " + key
	}
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "NoSuchBucket":
		return errkind.Errorf(ErrNotFound, "store %s: bucket %q does not exist on %s: create it, or check the bucket name and endpoint", s, s.loc.bucket, s.loc.endpoint)
	case "NoSuchKey", "NotFound":
		return errkind.Errorf(ErrNotFound, "store %s: no object %s", s, key)
	case "PreconditionFailed", "ConditionalRequestConflict":
		return errkind.Errorf(ErrConflict, "store %s: changed by another writer", what)
	case "InvalidAccessKeyId", "XAdminUserNotFound", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken", "AuthorizationHeaderMalformed":
		return errkind.Errorf(ErrUnreachable, "store %s: %s refused the credentials (%s): check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE or ~/.aws/credentials", what, s.loc.endpoint, resp.Code)
	}
	if resp.StatusCode == http.StatusNotFound {
		return errkind.Errorf(ErrNotFound, "store %s: not found", what)
	}
	var nerr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout():
		return errkind.Errorf(ErrUnreachable, "store %s: %s did not answer in time: check the endpoint and the network, then retry", what, s.loc.endpoint)
	case errors.Is(err, context.Canceled):
		return errkind.Errorf(context.Canceled, "store %s: interrupted", what)
	case resp.Code != "":
		return errkind.Errorf(ErrUnreachable, "store %s: %s answered %s: %s", what, s.loc.endpoint, resp.Code, resp.Message)
	}
	return errkind.Errorf(ErrUnreachable, "store %s: cannot reach %s (%v): check the endpoint (endpoint=host:port, insecure=1 for plain HTTP) and that the service is up", what, s.loc.endpoint, err)
}
