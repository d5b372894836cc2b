//! A librdkafka error code as kafkabench reads it: none, or the code (whose `Display` is
//! librdkafka's own text), for a record read and a delivery report alike.

use rdkafka::bindings as rd;
use rdkafka::types::RDKafkaErrorCode;

/// The error a message carries (`rd_kafka_message_t.err`); None for no error.
#[inline]
pub(crate) fn of_message(err: rd::rd_kafka_resp_err_t) -> Option<RDKafkaErrorCode> {
    (err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR)
        .then(|| RDKafkaErrorCode::from(err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_error_is_none() {
        assert_eq!(
            of_message(rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR),
            None
        );
    }

    #[test]
    fn an_error_is_its_code() {
        assert_eq!(
            of_message(rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__PARTITION_EOF),
            Some(RDKafkaErrorCode::PartitionEOF)
        );
    }
}
